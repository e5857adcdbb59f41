"""Which ETRecord maps a `.pte`'s instructions back to its source program's nodes, for numerics op by op and for
`run --node-times --source`: the one the user named; else the one saved beside the file (`NAME.etrecord`, as Lower
to ExecuTorch… and ExecuTorch's examples save it); else a fresh lowering of the source with the backend the file
uses, kept only when its instructions are the file's, argument for argument (core/deploy/pte_map.py
`instruction_signature`), not merely the same operators and delegates; otherwise refused, saying what to pass.

An ETRecord the user names or that lies beside the file is checked before ExecuTorch reads it (core/deploy/etrecord.py)
and must be of this source (its exported program's call_function nodes and targets) and of this file (its
instruction map names instructions the method has, most of them running an op its debug handles name).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.etrecord import load_etrecord
from pt2_viewer.core.deploy.handle_map import handles_of
from pt2_viewer.core.deploy.lower import lower
from pt2_viewer.core.deploy.provenance import target_text
from pt2_viewer.core.deploy.pte_map import check_same_program, instruction_signature, pte_program
from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.pte.magic import etrecord_beside

Emit = Callable[[dict[str, Any]], None]
BACKENDS_RELOWERED = {"XnnpackBackend": "xnnpack"}
GIVEN, BESIDE, RELOWERED = "given", "beside", "relowered"
PASS_IT = ("Pass the ETRecord made when the file was lowered (--etrecord FILE.etrecord), or keep it beside the file "
           "as NAME.etrecord; pt2-viewer lower writes both.")


@dataclass
class ChosenEtrecord:
    """The ETRecord that maps the file, parsed by ExecuTorch, and where it came from."""

    etrecord: Any  # executorch.devtools.etrecord.ETRecord
    path: str | None  # the file named or found beside the .pte; None for a fresh lowering's
    how: str  # GIVEN, BESIDE or RELOWERED
    compared: str  # a sentence for the result: "m.pte, mapped through the ETRecord m.etrecord"


@dataclass
class Trust:
    """What the user allowed for an ETRecord holding code (as for a `.pt2`)."""

    trusted: bool = False
    allowed: list[str] | None = None


def etrecord_words(used: str | None, how: str) -> str:
    """Which ETRecord mapped a `.pte`, as the commands' text output says it."""
    if how == RELOWERED:
        return "a fresh lowering of the source, its instructions equal to the file's"
    return f"{used} ({'found beside the .pte' if how == BESIDE else 'given'})"


def backend_of(program: Any, path: Path) -> str:
    """The backend a fresh lowering uses: XNNPACK when the file holds an XNNPACK delegate, else portable."""
    backends = {str(n.target)[len("delegate."):] for n in program.graph.nodes
                if str(n.target).startswith("delegate.")}
    unknown = sorted(b for b in backends if b not in BACKENDS_RELOWERED)
    if unknown:
        raise JobFailure("mismatch", f"'{path.name}' holds a delegate of {', '.join(unknown)}, which the viewer "
                         "cannot lower again to map its instructions.", PASS_IT)
    return "xnnpack" if backends else "portable"


def op_stem(target: str) -> str:
    """'torch.ops.aten.addmm.out' and 'aten.addmm.default' -> 'addmm'; a delegate call -> 'delegate'."""
    if target.startswith("delegate.") or "call_delegate" in target:
        return "delegate"
    parts = target.removeprefix("torch.ops.").split(".")
    return parts[1] if len(parts) > 2 else parts[-1]


def _fits(rec: Any, program: Any, name: str, pte: Path) -> str:
    """Why the ETRecord `rec` is not of this `.pte` method, or ''. Its instruction map must name instructions the
    method has (instructions with no handle, such as a dynamic view, are not in it), its delegate calls must be the
    method's, and nine in ten of its kernel calls must run an op of the edge-program nodes their debug handles name."""
    if rec.exported_program is None:
        return f"the ETRecord '{name}' holds no exported program to map back to"
    instructions = {int(i): handles_of(h) for i, h in ((rec._debug_handle_map or {}).get(program.name) or {}).items()}
    shown = {int(n.metadata["instruction"]): str(n.target) for n in program.graph.nodes if "instruction" in n.metadata}
    beyond = sorted(set(instructions) - set(shown))
    if not instructions or beyond:
        return (f"the ETRecord '{name}' maps {len(instructions)} instructions of '{program.name}'"
                + (f", up to instruction {beyond[-1]}, and the file has {len(shown)}" if beyond else ""))
    delegates = {int(i) for i in ((rec._delegate_map or {}).get(program.name) or {})}
    calls = {i for i, target in shown.items() if op_stem(target) == "delegate"}
    if delegates != calls:
        return (f"the ETRecord '{name}' has delegate calls at instructions {sorted(delegates)[:5]}, the file "
                f"'{pte.name}' at {sorted(calls)[:5]}")
    edge = rec.edge_dialect_program
    edge = edge.get(program.name) if isinstance(edge, dict) else edge
    ops: dict[int, set[str]] = {}
    for n in edge.graph.nodes if edge is not None else []:
        for h in handles_of(n.meta.get("debug_handle")):
            ops.setdefault(h, set()).add(op_stem(target_text(n.target)))
    kernels = {i: hs for i, hs in instructions.items() if i not in calls}
    agree = sum(1 for i, hs in kernels.items() if op_stem(shown[i]) in {o for h in hs for o in ops.get(h, ())})
    if agree < 0.9 * len(kernels):
        return f"only {agree} of the {len(kernels)} kernel calls it maps run an op its debug handles name"
    return ""


def choose_etrecord(pte: Path, method: str | None, given: str | None, ep: Any, work: Path, trust: Trust,
                    log: list[str], emit: Emit) -> ChosenEtrecord:
    """The ETRecord for `pte`'s `method` against the source `ep`: named, beside the file, or a fresh lowering whose
    instructions equal the file's; `JobFailure` ("mismatch") naming the first difference and what to pass."""
    program = pte_program(pte, method)
    for path, how in ((given, GIVEN), (None if given else etrecord_beside(pte), BESIDE)):
        if not path:
            continue
        name = Path(path).name
        rec = load_etrecord(path, work, trust.trusted, trust.allowed)
        if rec.exported_program is not None and ep is not None:  # None: no source named, the ETRecord's own
            check_same_program(rec.exported_program, ep, f"The ETRecord '{name}'")
        why = _fits(rec, program, name, pte)
        if why:
            raise JobFailure("mismatch", f"'{pte.name}' cannot be mapped: {why}.", PASS_IT)
        where = "" if how == GIVEN else " (found beside it)"
        return ChosenEtrecord(rec, str(path), how, f"{pte.name}, mapped through the ETRecord {name}{where}")
    return _relowered(pte, program, ep, work, log, emit)


def _relowered(pte: Path, program: Any, ep: Any, work: Path, log: list[str], emit: Emit) -> ChosenEtrecord:
    from executorch.devtools.etrecord import parse_etrecord

    backend = backend_of(program, pte)
    emit({"type": "progress", "stage": "lower", "fraction": 0.1,
          "message": f"No ETRecord: lowering the source to {backend} again to map {pte.name}'s instructions"})
    lowered = lower(ep, backend, log)
    work.mkdir(parents=True, exist_ok=True)
    fresh_pte, fresh_rec = work / "relowered.pte", work / "relowered.etrecord"
    fresh_pte.write_bytes(bytes(lowered.program.buffer))
    lowered.etrecord.save(str(fresh_rec))
    mine = instruction_signature(program)
    theirs = instruction_signature(pte_program(fresh_pte, program.name))
    if mine != theirs:
        first = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        a = mine[first][0] if first < len(mine) else "nothing"
        b = theirs[first][0] if first < len(theirs) else "nothing"
        what = f"{a} in the file, {b} in the fresh lowering" if a != b else f"{a}, with other arguments"
        raise JobFailure("mismatch", f"'{pte.name}' is not what lowering the source to {backend} gives now "
                         f"({len(mine)} instructions against {len(theirs)}; first difference at instruction {first}: "
                         f"{what}), so its instructions cannot be mapped back to the source's nodes.",
                         PASS_IT + " Or lower the source again (pt2-viewer lower) and use that file.")
    return ChosenEtrecord(parse_etrecord(str(fresh_rec)), None, RELOWERED,
                          f"{pte.name}, mapped through a fresh {backend} lowering of the source whose {len(mine)} "
                          "instructions equal the file's")
