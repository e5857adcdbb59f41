"""What the Numerics tab shows, decided without Qt: the job's request from the tab's choices, the table rows sorted by
error, the error overlay for the graph, and the summary line. app/numerics/panel.py only lays these out.

The overlay colours each compared node against the run's threshold: every error within it is the agreement colour (the
bottom of the scale), so a faithful run's noise (1e-7 beside 3e-7) never looks like a divergence; an error over it is
graded by order of magnitude (log10) from just over the threshold to the worst, so the ten-fold steps of a precision
loss or a bug are what the eye sees. Infinite errors (NaN/Inf the reference lacks) are at the top.
"""
from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

from pt2_viewer.core.graph.overlays import LegendItem, Overlay
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.numerics.metrics import DEFAULT_THRESHOLD, NodeError
from pt2_viewer.core.pte.magic import etrecord_beside, is_pte

OVERLAY_NAME = "Numerics error"
FLOOR = 1e-12  # a threshold of 0 is graded from here
OVER_FLOOR = 0.35  # the level of an error just over the threshold: apart from agreement (0) at a glance
CANDIDATE_CHOICES = (("core", "Core ATen decomposition"), ("functional", "Functional ATen decomposition"),
                     ("table", "My decomposition table (.py)…"), ("bf16", "bfloat16 (inputs, weights cast down)"),
                     ("fp16", "float16 (inputs, weights cast down)"), ("cuda", "The same program on CUDA"),
                     ("compile", "torch.compile (outputs only)"), ("aoti", "AOTInductor (kernel by kernel)"),
                     ("onnx", "ONNX (exported here, op by op in ONNX Runtime)"),
                     ("lowered", "What it became: a .pte, AOTInductor package or .onnx…"))
INPUT_MODES = ("auto", "sample", "generated")


@dataclass
class NumericsOptions:
    candidate: str = "core"  # a CANDIDATE_CHOICES key
    table: str | None = None  # the .py file, for "table"; the .pte, package or .onnx file, for "lowered"
    inputs: str = "auto"
    seed: int = 0
    threshold: float = DEFAULT_THRESHOLD
    preload: str | None = None


def parse_threshold(text: str) -> float | None:
    """The threshold the user typed ('1e-3', '0.01'), or None when it is not a non-negative number."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value >= 0 and math.isfinite(value) else None


def build_request(program_path: str, program_name: str | None, options: NumericsOptions) -> NumericsRequest:
    """The `numerics` job's request (docs/numerics.md); a decomposed candidate is saved for the compare view."""
    if options.inputs not in INPUT_MODES:
        raise ValueError(f"inputs must be one of {', '.join(INPUT_MODES)}, not {options.inputs!r}")
    if options.candidate == "table" and not options.table:
        raise ValueError("a table candidate needs its .py file")
    if options.candidate == "lowered" and not options.table:
        raise ValueError("a lowered candidate needs its .pte, package or .onnx file")
    candidate = options.table if options.candidate in ("table", "lowered") else options.candidate
    pte = options.candidate == "lowered" and is_pte(str(candidate))
    return NumericsRequest(
        program=program_path, program_name=program_name or None, preload=options.preload or None,
        candidate=str(candidate), inputs=options.inputs, seed=options.seed, threshold=options.threshold, top=20,
        save_candidate=options.candidate in ("core", "functional", "table"),
        etrecord=etrecord_beside(str(candidate)) if pte else None,  # without one, the source is lowered again
        # the panel asked before (an AOTInductor package's compiled code runs)
        allow_native=options.candidate == "lowered" and str(options.table).endswith(".pt2"))


@dataclass
class ErrorRow:
    COLUMNS = ("node", "candidate", "max rel", "max abs", "cosine", "SQNR dB", "NaN", "Inf", "note")

    error: NodeError
    over: bool  # past the threshold
    first: bool  # the first divergence

    def cells(self) -> tuple[str, ...]:
        e = self.error
        return (e.node, e.candidate, _g(e.max_rel), _g(e.max_abs), _g(e.cosine, 6), _g(e.sqnr_db, 4), str(e.nan),
                str(e.inf), e.note)


def _g(v: float, digits: int = 3) -> str:
    return f"{v:.{digits}g}" if math.isfinite(v) else str(v)


def node_errors(result: NumericsResult | None) -> list[NodeError]:
    if result is None or not result.ok:
        return []
    return [NodeError.from_json(n.to_json()) for n in result.nodes or []]


def _threshold(result: NumericsResult) -> float:
    return result.threshold if result.threshold is not None else DEFAULT_THRESHOLD


def error_rows(result: NumericsResult | None, inputs: Collection[str] = ()) -> list[ErrorRow]:
    """Every compared node, the largest error first (NaN/Inf the reference lacks count as infinite). Among equal
    errors the ops come before `inputs` (the placeholders: weights and user inputs), so a decomposition exact to
    the bit does not open its table on two hundred weights at 0."""
    if result is None or not result.ok:
        return []
    threshold = _threshold(result)
    first = result.first_divergence.node if result.first_divergence is not None else None
    errors = sorted(node_errors(result), key=lambda e: (not e.compared, -_sortable(e.error), e.node in inputs,
                                                         e.sqnr_db))  # a node not compared: last, never over
    return [ErrorRow(e, e.compared and not e.error <= threshold, e.node == first) for e in errors]


def _sortable(x: float) -> float:
    return math.inf if math.isnan(x) else x


def first_divergence(result: NumericsResult | None) -> str | None:
    if result is None or not result.ok or not result.per_node or result.first_divergence is None:
        return None
    return result.first_divergence.node


def error_overlay(result: NumericsResult | None) -> Overlay | None:
    """The per-node error painted on the reference's graph; None when nothing was compared node by node."""
    if result is None or not result.ok or not result.per_node:
        return None
    errors = [e for e in node_errors(result) if e.compared]  # a node not compared has no figure to paint
    if not errors:
        return None
    threshold = _threshold(result)
    levels = error_levels(errors, threshold)
    texts = {e.node: f"error {_g(e.error)} (max abs {_g(e.max_abs)}, cosine {_g(e.cosine, 6)}, SQNR "
             f"{_g(e.sqnr_db, 4)} dB" + (f", {e.nan} NaN" if e.nan else "") + (f", {e.inf} Inf" if e.inf else "")
             + (", over the threshold" if not e.error <= threshold else "") + ")" for e in errors}
    first = first_divergence(result)
    if first:
        texts[first] = "FIRST DIVERGENCE: " + texts[first]
    notes = [f"threshold {threshold:g}", f"first divergence: {first}" if first else "no divergence"]
    if any(math.isinf(e.error) or math.isnan(e.error) for e in errors):
        notes.append("NaN/Inf the reference lacks: top colour")
    legend = error_legend(errors, threshold)
    return Overlay(OVERLAY_NAME, levels=levels, legend=legend, texts=texts, notes=notes,
                   values={e.node: e.error for e in errors if not math.isnan(e.error)}, aggregate="max", fmt=_g,
                   rows={e.node: error_detail_rows(e, threshold, e.node == first) for e in errors})


def error_levels(errors: list[NodeError], threshold: float) -> dict[str, float]:
    """Each node's colour level: 0 (agreement) for an error within the threshold, however it compares with the other
    errors, so noise (1e-7 beside 3e-7) is not stretched over the whole scale; an error over it is graded by order of
    magnitude from just over the threshold (OVER_FLOOR, visibly apart from agreement) to the worst (1); NaN/Inf at 1."""
    over = {e.node: math.log10(e.error) for e in errors if not e.error <= threshold and math.isfinite(e.error)}
    lo = math.log10(max(threshold, FLOOR))
    hi = max(over.values(), default=lo)
    levels: dict[str, float] = {}
    for e in errors:
        if e.error <= threshold:
            levels[e.node] = 0.0
        elif e.node not in over:  # NaN or Inf
            levels[e.node] = 1.0
        else:
            levels[e.node] = OVER_FLOOR + (1 - OVER_FLOOR) * ((over[e.node] - lo) / (hi - lo) if hi > lo else 1.0)
    return levels


def error_legend(errors: list[NodeError], threshold: float) -> list[LegendItem]:
    """The scale's two ends: agreement (within the threshold, named) and the worst error over it, or, with none
    over it, what the top colour would mean."""
    over = [e.error for e in errors if not e.error <= threshold]
    worst = max(over, key=_sortable, default=None)
    high = f"over {threshold:g}" if worst is None else f"worst {_g(worst)}"
    return [LegendItem(f"within threshold {threshold:g}", level=0.0), LegendItem(high, level=1.0)]


def error_detail_rows(e: NodeError, threshold: float, first: bool) -> list[tuple[str, str]]:
    """The node's figures as the Details panel lists them, under "Numerics error"."""
    verdict = ("first divergence" if first else "over the threshold" if not e.error <= threshold
               else "within the threshold")
    rows = [("error", f"{_g(e.error)}  {verdict}"), ("threshold", f"{threshold:g}"), ("max abs", _g(e.max_abs)),
            ("max rel", _g(e.max_rel)), ("cosine", _g(e.cosine, 6)), ("SQNR", f"{_g(e.sqnr_db, 4)} dB")]
    if e.nan or e.inf or e.ref_nan or e.ref_inf:
        rows.append(("NaN / Inf", f"{e.nan} / {e.inf} (reference {e.ref_nan} / {e.ref_inf})"))
    if e.candidate != e.node:
        rows.append(("candidate", e.candidate))
    if e.note:
        rows.append(("note", e.note))
    return rows


def summary_text(result: NumericsResult | None) -> str:
    """One or two sentences: what was compared, where it first diverged, and the memory it took."""
    if result is None or not result.ok:
        return ""
    what = "nodes" if result.per_node else "outputs"
    parts = [f"Compared {result.compared or 0} {what} with {result.candidate} "
             f"({result.inputs.source if result.inputs is not None else ''} inputs)."]
    if result.note:
        parts.append(result.note)
    found = result.first_divergence
    if found:
        parts.append(f"First divergence: {found.node} (error {_g(float(found.error))}, threshold "
                     f"{_threshold(result):g}); its inputs are within the threshold.")
    else:
        parts.append(f"No divergence: every error is within {_threshold(result):g}.")
    m = result.memory
    if m is not None:
        parts.append(f"Memory: {m.peak_held_bytes / 2**20:.1f} MB of reference values held, "
                     f"{m.spilled_bytes / 2**20:.1f} MB spilled, worker peak "
                     f"{m.peak_rss_bytes / 2**20:.0f} MB.")
    return " ".join(parts)


