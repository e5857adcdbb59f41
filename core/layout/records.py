"""Plain records for graph layout: what the GUI asks for and what Graphviz answers.

They cross a process boundary (GUI -> layout child) and live in a disk cache, so they convert to and from compact
JSON and nothing else (never pickle). Sizes and coordinates are in points (72 per inch); y grows DOWNWARD, as in a
Qt scene. No torch, no Qt, no pygraphviz here: the GUI process imports this module.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, TypeVar

Point = tuple[float, float]

RANKDIRS = ("TB", "BT", "LR", "RL")
# Graphviz node shapes that make sense without a label; anything else is refused with a clear message.
SHAPES = frozenset(
    {
        "box", "rect", "rectangle", "square", "ellipse", "oval", "circle", "doublecircle", "point", "diamond",
        "hexagon", "octagon", "triangle", "invtriangle", "trapezium", "parallelogram", "house", "cylinder", "note",
        "tab", "folder", "box3d", "component", "plain", "plaintext", "none", "Mrecord", "record",
    }
)


UNKNOWN_END = "?"  # in a request's shape, an edge end that names no node of the request (never a position)


class LayoutError(Exception):
    """A layout could not be produced (bad request, Graphviz failure, the layout process died)."""


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _flat_points(flat: Any, what: str) -> list[Point]:
    """[x0, y0, x1, y1, ...] -> [(x0, y0), (x1, y1), ...], refusing anything but an even count of finite numbers.

    A 4k-node result holds tens of thousands of numbers and is decoded in the GUI process, so they are checked in
    bulk: sum() raises TypeError for a non-number and is not finite if any value is not.
    """
    if not isinstance(flat, list) or len(flat) % 2 or not math.isfinite(sum(flat)):
        raise ValueError(f"{what} must be a flat list of finite x, y numbers, got {str(flat)[:80]}")
    return list(zip(flat[0::2], flat[1::2]))


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {value!r}")
    return value


@dataclass(frozen=True)
class LayoutNode:
    """A node to place: its id (unique within the request) and its size in points."""

    id: str
    width: float
    height: float
    shape: str = "box"

    def __post_init__(self) -> None:
        _text(self.id, "node id")
        for name in ("width", "height"):
            value = _number(getattr(self, name), f"node {self.id!r} {name}")
            if value <= 0:
                raise ValueError(f"node {self.id!r} {name} must be positive (points), got {value}")
            object.__setattr__(self, name, value)  # ints become floats, so equal sizes hash equally
        if self.shape not in SHAPES:
            raise ValueError(f"node {self.id!r} has unknown shape {self.shape!r}; use one of {sorted(SHAPES)}")


@dataclass(frozen=True)
class LayoutEdge:
    """A directed edge between two node ids."""

    src: str
    dst: str

    def __post_init__(self) -> None:
        _text(self.src, "edge source")
        _text(self.dst, "edge target")


_R = TypeVar("_R", bound="_JsonRecord")


class _JsonRecord:
    """to_json/from_json for a record that defines to_json_obj/from_json_obj."""

    def to_json(self) -> str:
        return dumps(self.to_json_obj())  # type: ignore[attr-defined]

    @classmethod
    def from_json(cls: type[_R], text: str | bytes) -> _R:
        return cls.from_json_obj(json.loads(text))  # type: ignore[attr-defined]


@dataclass
class LayoutRequest(_JsonRecord):
    """One graph to lay out.

    `key_hint` is a label for people (say the module group's path): it names the request in error messages and is NOT
    part of the cache key, so two groups of the same shape share one cache entry.
    """

    nodes: list[LayoutNode]
    edges: list[LayoutEdge]
    rankdir: str = "TB"
    key_hint: str = ""

    def __post_init__(self) -> None:
        if self.rankdir not in RANKDIRS:
            raise ValueError(f"rankdir must be one of {RANKDIRS}, got {self.rankdir!r}")
        seen: set[str] = set()
        for node in self.nodes:
            if node.id in seen:
                raise ValueError(f"layout request {self.key_hint!r}: node id {node.id!r} appears twice; "
                                 "ids must be unique")
            seen.add(node.id)

    def content(self) -> dict[str, Any]:
        """Everything that determines the layout, in a canonical form (the cache hashes this)."""
        return {
            "rankdir": self.rankdir,
            "nodes": [[n.id, n.width, n.height, n.shape] for n in self.nodes],
            "edges": [[e.src, e.dst] for e in self.edges],
        }

    def shape(self) -> dict[str, Any]:
        """`content()` with each node id replaced by its position ("0", "1", ...; an edge's unknown end by "?"): all
        that decides the drawing, since dot sees synthetic names anyway. Groups of one shape (a model's repeated
        layers) share it, so they are laid out once and cached once; `LayoutResult.named_for` maps the answer back."""
        index = {n.id: str(i) for i, n in enumerate(self.nodes)}
        return {
            "rankdir": self.rankdir,
            "nodes": [[str(i), n.width, n.height, n.shape] for i, n in enumerate(self.nodes)],
            "edges": [[index.get(e.src, UNKNOWN_END), index.get(e.dst, UNKNOWN_END)] for e in self.edges],
        }

    def to_json_obj(self) -> dict[str, Any]:
        return {**self.content(), "key_hint": self.key_hint}

    @classmethod
    def from_json_obj(cls, obj: Any) -> LayoutRequest:
        if not isinstance(obj, dict):
            raise ValueError(f"a layout request must be a JSON object, got {type(obj).__name__}")
        try:
            nodes = [LayoutNode(_text(i, "node id"), w, h, _text(s, "shape")) for i, w, h, s in obj["nodes"]]
            edges = [LayoutEdge(s, d) for s, d in obj["edges"]]
            rankdir, key_hint = _text(obj.get("rankdir", "TB"), "rankdir"), _text(obj.get("key_hint", ""), "key_hint")
            return cls(nodes, edges, rankdir, key_hint)
        except (KeyError, TypeError, ValueError) as exc:  # ValueError: also a pair that does not unpack
            raise ValueError(f"malformed layout request: {type(exc).__name__}: {exc}") from exc


@dataclass
class EdgeRoute:
    """Where an edge runs: cubic B-spline control points (1 + 3k of them, Graphviz's `pos`), y down.

    `head` is the arrow tip when Graphviz left room for an arrowhead: draw the arrow from `points[-1]` to `head`.
    An edge the engine ignored (a self-loop, or an endpoint that is not a node of the request) has no points.
    """

    src: str
    dst: str
    points: list[Point] = field(default_factory=list)
    head: Point | None = None


@dataclass
class LayoutResult(_JsonRecord):
    """Node centres, edge routes in the request's edge order, the drawing's size, and how long Graphviz took."""

    positions: dict[str, Point]
    edges: list[EdgeRoute]
    width: float
    height: float
    seconds: float

    def named_for(self, request: LayoutRequest) -> LayoutResult:
        """This result of `request`'s shape (nodes named by position) in `request`'s own ids. Edge points are shared,
        not copied: results are read, never changed in place."""
        pos = self.positions
        positions = {n.id: pos[str(i)] for i, n in enumerate(request.nodes)}
        edges = [EdgeRoute(e.src, e.dst, r.points, r.head) for e, r in zip(request.edges, self.edges, strict=True)]
        return LayoutResult(positions, edges, self.width, self.height, self.seconds)

    def shaped(self, request: LayoutRequest) -> LayoutResult:
        """This result of `request` with its nodes named by position, as `request.shape()` names them."""
        index = {n.id: str(i) for i, n in enumerate(request.nodes)}
        positions = {index[k]: xy for k, xy in self.positions.items()}
        edges = [EdgeRoute(index.get(r.src, UNKNOWN_END), index.get(r.dst, UNKNOWN_END), r.points, r.head)
                 for r in self.edges]
        return LayoutResult(positions, edges, self.width, self.height, self.seconds)

    def fits(self, nodes: int, edges: int) -> bool:
        """Whether this is a result named by position for a shape of `nodes` nodes and `edges` edges."""
        return len(self.edges) == edges and len(self.positions) == nodes and all(
            str(i) in self.positions for i in range(nodes))

    def to_json_obj(self) -> dict[str, Any]:
        return {
            "positions": {k: [x, y] for k, (x, y) in self.positions.items()},
            # points are flattened [x0, y0, x1, y1, ...]: a 4k-node result stays a few hundred KB
            "edges": [
                [e.src, e.dst, [c for p in e.points for c in p], list(e.head) if e.head else None] for e in self.edges
            ],
            "width": self.width,
            "height": self.height,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json_obj(cls, obj: Any) -> LayoutResult:
        if not isinstance(obj, dict):
            raise ValueError(f"a layout result must be a JSON object, got {type(obj).__name__}")
        try:
            positions: dict[str, Point] = {}
            for node_id, xy in obj["positions"].items():
                point = _flat_points(xy, "a node position")
                if len(point) != 1:
                    raise ValueError(f"the position of {node_id!r} must be an [x, y] pair, got {xy!r}")
                positions[_text(node_id, "node id")] = point[0]
            edges = []
            for src, dst, flat, head in obj["edges"]:
                tip = None if head is None else _flat_points(head, "an arrow head")[0]
                edges.append(EdgeRoute(_text(src, "edge source"), _text(dst, "edge target"),
                                       _flat_points(flat, "edge points"), tip))
            return cls(
                positions,
                edges,
                _number(obj["width"], "width"),
                _number(obj["height"], "height"),
                _number(obj["seconds"], "seconds"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"malformed layout result: {type(exc).__name__}: {exc}") from exc


def dumps(obj: Any) -> str:
    """Compact, deterministic JSON (one line: the pipe protocol is line based)."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)
