"""What the graph view draws, as data: the composed scene (`SceneLayout`: node boxes, group boxes and frames, edges,
hub proxies, where the program starts) in scene coordinates, the sizes its boxes are drawn at, and a node's text.

Split from the scene model (core/graph/scene.py), which decides what is visible and composes this; the view
(app/graph/), the framing (core/graph/framing.py) and the report read only this. Coordinates are points, y down (Qt
scene convention).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from pt2_viewer.core.model.program import Graph, Node, NodeOp

if TYPE_CHECKING:
    from pt2_viewer.core.graph.index import ModuleGroup

NODE_H = 38.0
GROUP_BOX_H = 46.0
FRAME_PAD = 14.0
FRAME_HEADER = 26.0
CHAR_W = 7.0
PROXY_H = 16.0
ROW_H = 17.0  # a folded weight's row inside its user's box
ROW_PAD = 4.0  # below the last row
ROW_CHAR_W = 6.2
ROW_MAX_W = 300.0


class NodeBox(msgspec.Struct):
    """Where a node's box is drawn, in scene coordinates."""

    node: str
    x: float  # top-left
    y: float
    w: float
    h: float
    group: str  # the group path it sits in (whose frame holds it)
    kind: str = "node"  # "node", or "weight_row": a folded weight drawn inside its host's box
    host: str = ""  # a weight row's host node
    title: str = ""  # a leaf module's title (`conv1: Conv2d`) or a row's name (`weight`); "" for the node's own
    module: str = ""  # the leaf module group this box stands for ("" for none)
    unused: bool = False  # a weight row that feeds nothing


class GroupBox(msgspec.Struct):
    """Where a module group's frame (expanded) or box (collapsed) is drawn."""

    path: str
    title: str
    count: int
    expanded: bool
    x: float
    y: float
    w: float
    h: float
    depth: int
    ops: int = 0  # the op calls inside (call_function nodes): what a collapsed box says it holds


class EdgeLine(msgspec.Struct):
    """An edge as drawn between two visible items, with its route when Graphviz gave one."""

    src: str  # visible item id (core/graph/ids.py): a node name or a group's id
    dst: str
    values: tuple[str, ...]  # the values carried
    p0: tuple[float, float]
    p1: tuple[float, float]
    route: tuple[tuple[float, float], ...] = ()  # Graphviz's spline (1 + 3k points) when both ends share a layout


class HubProxy(msgspec.Struct):
    """A small stand-in for a hub node (one that feeds many) drawn beside one consumer instead of an edge."""

    hub: str  # the hub node
    consumer: str  # visible item id it feeds
    x: float
    y: float


class SceneLayout(msgspec.Struct):
    """Everything the scene draws for one expansion: boxes, frames, edges and hub stand-ins."""

    nodes: list[NodeBox] = msgspec.field(default_factory=list)
    groups: list[GroupBox] = msgspec.field(default_factory=list)
    edges: list[EdgeLine] = msgspec.field(default_factory=list)
    proxies: list[HubProxy] = msgspec.field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    # Where the program starts, for the first view: the rects (x, y, w, h) of the visible items showing its inputs,
    # then the items they feed, breadth first; the view frames as many of them as it can show readably.
    start: list[tuple[float, float, float, float]] = msgspec.field(default_factory=list)
    start_inputs: int = 0  # how many of `start`'s first rects show the inputs: the first view never scrolls past them

def node_label(n: Node) -> str:
    if n.op is NodeOp.CALL_FUNCTION:
        return n.op_name
    return n.name


def leaf_title(group: ModuleGroup | None, graph: Graph, name: str) -> str:
    """The title of a module of one op, drawn as that op's box (none for a node outside such a module): the
    module's, `conv1: Conv2d`. A module whose class the file does not name (the scopes in a TorchScript ONNX export's
    node names) is titled with its op instead, `conv1: Conv`, or the box would not say what it computes."""
    if group is None:
        return ""
    n = graph.node_by_name[name]
    if group.class_name or n.op is not NodeOp.CALL_FUNCTION or group.call:
        return group.title
    return f"{group.title}: {node_label(n)}"


def node_subtitle(n: Node, graph: Graph) -> str:
    """The second line of a node: its (first) output's type, e.g. `f32[s77, 3]`, else its name."""
    first = next((o for o in n.outputs if o), None)
    v = graph.values.get(first) if first else None
    if v is None or v.kind == "graph":
        return n.name if n.op is NodeOp.CALL_FUNCTION else ""
    more = sum(1 for o in n.outputs if o) - 1
    return v.type_text + (f" (+{more})" if more > 0 else "")


def node_width(n: Node, graph: Graph) -> float:
    text = max(len(node_label(n)) * 1.1, len(node_subtitle(n, graph)) * 0.95)
    return max(72.0, min(280.0, CHAR_W * text + 24))


def row_type(graph: Graph, name: str) -> str:
    """A weight row's type text, `f32[64, 3, 7, 7]`."""
    node = graph.node_by_name[name]
    first = next((o for o in node.outputs if o), None)
    v = graph.values.get(first) if first else None
    return v.type_text if v is not None and v.kind != "graph" else ""
