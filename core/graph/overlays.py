"""Overlays: one value per node painted over the graph (a run's per-node time, dtype, parameter bytes, a user's own
`{node_name: value}` JSON, a numerics error ...), with the legend that says what the colours mean. No Qt: an overlay
is a name, values and a legend; the graph view picks the colours (app/theme.py) and paints.

Two shapes of overlay. A *scale* overlay maps each node to a level in 0..1 (its value between the overlay's low and
high ends); its legend names the two ends. A *category* overlay maps each node to one of a few categories (dtypes);
its legend lists them in order, and a node's category is an index into the palette's category colours
(core/graph/palette.py); a category that always means one thing (delegated) names its own colour. Anyone can make an
overlay: build an `Overlay` with `scale_overlay` or `category_overlay` and hand it to the document
(`DocumentWidget.set_overlay`).
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from pt2_viewer.core.model.program import Graph, InputKind, NodeOp, Program
from pt2_viewer.core.util.words import format_bytes, format_seconds

MAX_CATEGORIES = 12  # more distinct values than this: the rest share the last category, "other"
MAX_JSON_BYTES = 64 * 1024 * 1024

DTYPE_BYTES = {
    "float64": 8, "complex64": 8, "int64": 8, "uint64": 8, "complex128": 16, "float32": 4, "int32": 4, "uint32": 4,
    "float16": 2, "bfloat16": 2, "int16": 2, "uint16": 2, "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1,
    "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1,
}


class LegendItem(msgspec.Struct, frozen=True):
    """One entry of an overlay's legend."""

    label: str
    level: float | None = None  # a scale overlay's position (0 or 1)
    category: int | None = None  # a category overlay's index


class Overlay(msgspec.Struct):
    """Values painted over the graph's nodes (run time, dtype, ...) and the legend that reads them."""

    name: str  # "Run time", "dtype", ...: the View > Overlay entry and the legend's title
    levels: dict[str, float] = msgspec.field(default_factory=dict)  # scale: node -> 0..1
    categories: dict[str, int] = msgspec.field(default_factory=dict)  # category: node -> index into `legend`
    legend: list[LegendItem] = msgspec.field(default_factory=list)
    texts: dict[str, str] = msgspec.field(default_factory=dict)  # node -> its value in words, for tooltips
    notes: list[str] = msgspec.field(default_factory=list)  # what could not be used (names not in the graph ...)
    values: dict[str, float] = msgspec.field(default_factory=dict)  # node -> its number, where the overlay has numbers
    aggregate: str = ""  # how a collapsed group sums up its nodes' numbers: "sum" (bytes, time), "max" (error)
    fmt: Callable[[float], str] | None = None  # a number in words ("3.0 KB"), for group aggregates
    log: bool = False  # levels on a log scale (values spanning orders of magnitude)
    rows: dict[str, list[tuple[str, str]]] = msgspec.field(default_factory=dict)  # node -> Details rows (label, text)
    owners: set[str] = msgspec.field(default_factory=set)  # nodes that own their values (the weights): a group holding
    # any sums only those, so an op and the weight it reads are not counted twice

    @property
    def is_scale(self) -> bool:
        return not self.categories

    def covers(self, node: str) -> bool:
        return node in self.levels or node in self.categories

    def text(self, node: str) -> str | None:
        return self.texts.get(node)

    def detail_rows(self, node: str) -> list[tuple[str, str]]:
        """What the Details panel lists for `node` under the overlay's name: its own rows, else its value."""
        if node in self.rows:
            return self.rows[node]
        text = self.texts.get(node)
        return [("value", text)] if text else []


class GroupValue(msgspec.Struct, frozen=True):
    """A collapsed group's aggregate of an overlay: the sum or max of its nodes' numbers."""

    value: float
    text: str  # "sum 3.0 MB over 12 nodes"
    level: float  # 0..1, on the scale of the groups shown together
    count: int  # nodes with a value


def group_values(overlay: Overlay, members: Mapping[str, list[str]]) -> dict[str, GroupValue]:
    """Each group's aggregate (`overlay.aggregate`: sum for bytes and time, max for an error) of the numbers of its
    member nodes, levelled from the smallest to the largest aggregate among `members` (groups drawn together), so a
    collapsed view of a big model is coloured by where the bytes, the time or the error are. A max keeps the nodes'
    own levels (the worst node's colour); a sum gets its own scale, since it outgrows every node."""
    if not overlay.aggregate or not overlay.values:
        return {}
    fmt = overlay.fmt or (lambda v: f"{v:g}")
    agg: dict[str, tuple[float, int, str]] = {}
    for group, nodes in members.items():
        vals = [(overlay.values[n], n) for n in nodes if n in overlay.values]
        owned = [(v, n) for v, n in vals if n in overlay.owners]
        if owned and overlay.aggregate == "sum":
            vals = owned
        if not vals:
            continue
        if overlay.aggregate == "max":
            v, worst = max(vals, key=lambda t: (_sortable(t[0]), t[1]))
            agg[group] = (v, len(vals), worst)
        else:
            agg[group] = (sum(v for v, _ in vals), len(vals), "")
    if not agg:
        return {}
    out: dict[str, GroupValue] = {}
    if overlay.aggregate == "max":
        for g, (v, count, worst) in agg.items():
            out[g] = GroupValue(v, f"max {fmt(v)} at {worst} ({count} nodes)", overlay.levels.get(worst, 1.0), count)
        return out

    def t(v: float) -> float:
        return math.log10(1 + max(0.0, v)) if overlay.log else v

    finite = [t(v) for v, _, _ in agg.values() if math.isfinite(v)]
    lo, hi = min(finite, default=0.0), max(finite, default=0.0)
    for g, (v, count, _) in agg.items():
        level = 1.0 if not math.isfinite(v) else ((t(v) - lo) / (hi - lo) if hi > lo else 1.0)
        out[g] = GroupValue(v, f"sum {fmt(v)} over {count} nodes", level, count)
    return out


def group_legend(overlay: Overlay, values: Mapping[str, GroupValue]) -> str:
    """The legend's line for the collapsed groups shown: how they aggregate and the range of their aggregates."""
    if not values:
        return ""
    fmt = overlay.fmt or (lambda v: f"{v:g}")
    nums = [g.value for g in values.values()]
    lo, hi = min(nums, key=_sortable), max(nums, key=_sortable)
    return f"groups: {overlay.aggregate} of their nodes, {fmt(lo)} – {fmt(hi)}"


def _sortable(x: float) -> float:
    return math.inf if math.isnan(x) else x


def scale_overlay(name: str, values: Mapping[str, float], fmt: Callable[[float], str] = lambda v: f"{v:g}",
                  log: bool = False) -> Overlay:
    """Numbers per node, coloured from the lowest (level 0) to the highest (level 1); `log` for values spanning
    orders of magnitude (bytes). Non-finite values are left out, with a note."""
    finite = {n: float(v) for n, v in values.items() if isinstance(v, (int, float)) and math.isfinite(v)}
    notes = [f"{len(values) - len(finite)} values are not finite numbers"] if len(finite) < len(values) else []
    if not finite:
        return Overlay(name, notes=notes)

    def t(v: float) -> float:
        return math.log10(1 + max(0.0, v)) if log else v

    lo, hi = min(finite.values()), max(finite.values())
    tlo, thi = t(lo), t(hi)
    span = thi - tlo
    levels = {n: (t(v) - tlo) / span if span > 0 else 1.0 for n, v in finite.items()}
    legend = [LegendItem(fmt(lo), level=0.0), LegendItem(fmt(hi), level=1.0)]
    return Overlay(name, levels=levels, legend=legend, texts={n: fmt(v) for n, v in finite.items()}, notes=notes,
                   values=finite, fmt=fmt, log=log)


def category_overlay(name: str, values: Mapping[str, str], fixed: Mapping[str, int] | None = None) -> Overlay:
    """A word per node; categories in order of how many nodes have them, the rarest beyond MAX_CATEGORIES merged as
    "other". A category named in `fixed` (category -> colour index, core/graph/palette.py) keeps its own colour
    whatever its size, and is in the legend even when no node has it, so the legend always says what it means;
    the others take the colours left, in order of size."""
    fixed = dict(fixed or {})
    counts: dict[str, int] = {}
    for v in values.values():
        counts[v] = counts.get(v, 0) + 1
    free = [i for i in range(MAX_CATEGORIES) if i not in fixed.values()]
    ranked = sorted((c for c in counts if c not in fixed), key=lambda c: (-counts[c], c))
    if len(ranked) > len(free):
        ranked = [*ranked[:len(free) - 1], "other"]
    index = {**fixed, **{c: free[i] for i, c in enumerate(ranked)}}
    other = index.get("other", free[len(ranked) - 1] if ranked else 0)
    cats = {n: index.get(v, other) for n, v in values.items()}
    per_index: dict[int, int] = {}
    for i in cats.values():
        per_index[i] = per_index.get(i, 0) + 1
    legend = [LegendItem(f"{c} ({per_index.get(i, 0)})", category=i) for c, i in index.items()]
    return Overlay(name, categories=cats, legend=legend, texts=dict(values))


def run_time_overlay(seconds: Mapping[str, float]) -> Overlay:
    """A run's per-node time in seconds (the least of the run's repeats), from the fastest node to the slowest; the
    legend gives the two times, a node's tooltip its time and share of the slowest, a collapsed group the sum."""
    o = scale_overlay("Run time", seconds, fmt=format_seconds)
    top = max(o.values.values(), default=0.0)
    o.texts = {n: f"{format_seconds(v)} ({v / top:.0%} of the slowest)" if top > 0 else format_seconds(v)
               for n, v in o.values.items()}
    if o.legend:
        o.legend = [LegendItem(f"fastest {o.legend[0].label}", level=0.0),
                    LegendItem(f"slowest {o.legend[1].label}", level=1.0)]
    o.aggregate = "sum"
    return o


def dtype_overlay(graph: Graph) -> Overlay:
    """Each node's (first tensor) output dtype."""
    values: dict[str, str] = {}
    for n in graph.nodes:
        for o in n.outputs:
            v = graph.values.get(o) if o else None
            if v is not None and v.meta is not None:
                values[n.name] = v.meta.dtype
                break
    return category_overlay("dtype", values)


def tensor_bytes(graph: Graph, value: str | None) -> int | None:
    v = graph.values.get(value) if value else None
    if v is None or v.meta is None:
        return None
    numel = v.meta.numel()
    size = DTYPE_BYTES.get(v.meta.dtype)
    return None if numel is None or size is None else numel * size


def parameter_bytes(program: Program, graph: Graph) -> dict[str, int]:
    """Bytes of parameters, buffers and constant tensors: on their own input nodes, and on each op that reads them
    directly (the linear that uses a weight)."""
    kinds = {InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR}
    owned = {s.name for s in program.signature.inputs if s.kind in kinds} if graph is program.graph else set()
    sizes: dict[str, int] = {}
    for n in graph.nodes:
        if n.op is NodeOp.PLACEHOLDER and n.name in owned:
            b = tensor_bytes(graph, n.outputs[0] if n.outputs else n.name)
            if b is not None:
                sizes[n.name] = b
    out = dict(sizes)
    for n in graph.nodes:
        if n.op is NodeOp.CALL_FUNCTION:
            total = sum(sizes.get(graph.values[r].producer or "", 0) if r in graph.values else 0
                        for r in dict.fromkeys(n.input_refs()))
            if total:
                out[n.name] = total
    return out


def parameter_bytes_overlay(program: Program, graph: Graph) -> Overlay:
    """Bytes per node; a collapsed group sums the weights inside it (drawn as rows of their ops, they are in their
    ops' groups), else, when its weights are drawn outside it, the bytes its ops read."""
    o = scale_overlay("Parameter bytes", parameter_bytes(program, graph), fmt=format_bytes, log=True)
    o.aggregate = "sum"
    o.owners = {n.name for n in graph.nodes if n.op is NodeOp.PLACEHOLDER and n.name in o.values}
    return o


class OverlayFileError(ValueError):
    """A user's overlay file that cannot be read: the message says why, in one line."""


def json_overlay(path: str | Path, graph: Graph) -> Overlay:
    """A user's own `{node_name: value}` JSON: numbers make a scale overlay, anything else (strings, booleans) a
    category overlay. Names not in the graph are counted in `notes`."""
    p = Path(path)
    return overlay_from_json(read_overlay_json(p), p, graph)


def read_overlay_json(p: Path) -> Any:
    """The JSON an overlay file holds, or OverlayFileError in one line (too big, unreadable, not JSON)."""
    try:
        if p.stat().st_size > MAX_JSON_BYTES:
            raise OverlayFileError(f"{p.name} is over {MAX_JSON_BYTES // 2**20} MB")
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        if isinstance(e, OverlayFileError):
            raise
        raise OverlayFileError(f"Cannot read {p.name}: {e}") from None


def overlay_from_json(data: Any, p: Path, graph: Graph) -> Overlay:
    """`{node_name: value}` read from `p` as an overlay of `graph` (see `json_overlay`)."""
    if not isinstance(data, dict):
        raise OverlayFileError(f"{p.name} is not a JSON object of {{node_name: value}}")
    names = graph.node_by_name
    known = {str(k): v for k, v in data.items() if str(k) in names}
    unknown = len(data) - len(known)
    numbers = {k: v for k, v in known.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if known and len(numbers) == len(known):
        o = scale_overlay(p.stem, numbers)
    else:
        o = category_overlay(p.stem, {k: v if isinstance(v, str) else json.dumps(v) for k, v in known.items()})
    if unknown:
        o.notes.append(f"{unknown} of {len(data)} names are not nodes of this graph")
    if not known:
        o.notes.append("no name in the file is a node of this graph")
    return o
