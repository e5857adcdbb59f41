"""Run Graphviz `dot` in THIS process through pygraphviz and turn its answer into a LayoutResult.

pygraphviz holds the GIL for the whole layout, so the GUI never calls this directly: the layout child
(`python -m pt2_viewer.core.layout`) does, and so do headless rendering and tests. The graph is handed to Graphviz as
DOT text with synthetic node names (n0, n1, ...), so any id string is safe, and read back as Graphviz's JSON output
(`json0`), so no Python loop walks Graphviz objects one attribute at a time.
"""
from __future__ import annotations

import json
import time
from typing import Any

import pygraphviz

from pt2_viewer.core.layout.records import EdgeRoute, LayoutError, LayoutRequest, LayoutResult, Point

# A change to the attributes below needs ENGINE_VERSION bumped (core/layout/engine_id.py): cached layouts made with
# the old ones are then not reused.
NODESEP_IN = 0.25  # horizontal gap between neighbours in a rank, inches
RANKSEP_IN = 0.4  # vertical gap between ranks, inches
# Above this many nodes dot's crossing minimisation and network simplex get capped: a 4k-node graph with skip
# connections otherwise takes tens of seconds (see docs/layout.md for the measurements).
LARGE_GRAPH_NODES = 1000
# Above this many, network simplex is capped too (not crossing minimisation): the ROOT group of a 135-layer model
# (207 nodes, most of them the layers' big boxes) takes dot 0.13 s instead of 0.31 s, the drawing as readable.
MEDIUM_GRAPH_NODES = 150
SMALL_GRAPH_LIMITS = {"mclimit": "1.0", "nslimit": "10", "nslimit1": "10"}
MEDIUM_GRAPH_LIMITS = {"mclimit": "1.0", "nslimit": "1", "nslimit1": "1"}
LARGE_GRAPH_LIMITS = {"mclimit": "0.1", "nslimit": "1", "nslimit1": "1", "remincross": "false"}


def layout(request: LayoutRequest) -> LayoutResult:
    """Lay out one graph with dot. Self-loops and edges to unknown nodes are kept in the result with no points."""
    start = time.perf_counter()
    if not request.nodes:
        routes = [EdgeRoute(e.src, e.dst) for e in request.edges]
        return LayoutResult({}, routes, 0.0, 0.0, time.perf_counter() - start)
    try:
        graph = pygraphviz.AGraph(string=to_dot(request))
        answer = json.loads(graph.draw(format="json0", prog="dot"))
    except Exception as exc:  # pygraphviz raises bare ValueError/OSError/DotError for Graphviz failures
        raise LayoutError(f"Graphviz could not lay out {_name(request)}: {exc}") from exc
    return _result(request, answer, time.perf_counter() - start)


def to_dot(request: LayoutRequest) -> str:
    """The request as DOT text: node i is `n{i}`, kept edge i carries `k=i` so it maps back to the request."""
    nodes = len(request.nodes)
    limits = (LARGE_GRAPH_LIMITS if nodes > LARGE_GRAPH_NODES else MEDIUM_GRAPH_LIMITS if nodes > MEDIUM_GRAPH_NODES
              else SMALL_GRAPH_LIMITS)
    graph_attrs = {"rankdir": request.rankdir, "nodesep": str(NODESEP_IN), "ranksep": str(RANKSEP_IN),
                   "splines": "spline", **limits}
    lines = [
        "digraph G {",
        "graph [" + " ".join(f"{k}={v}" for k, v in graph_attrs.items()) + "];",
        'node [fixedsize=true label="" margin=0];',
    ]
    index = {}
    for i, node in enumerate(request.nodes):
        index[node.id] = i
        lines.append(f'n{i} [width={node.width / 72:.6g} height={node.height / 72:.6g} shape="{node.shape}"];')
    for k, edge in enumerate(request.edges):
        src, dst = index.get(edge.src), index.get(edge.dst)
        if src is not None and dst is not None and src != dst:
            lines.append(f"n{src}->n{dst} [k={k}];")
    lines.append("}")
    return "\n".join(lines)


def _result(request: LayoutRequest, answer: dict[str, Any], seconds: float) -> LayoutResult:
    left, bottom, right, top = _floats(answer["bb"])

    def flip(x: float, y: float) -> Point:
        return (round(x - left, 3), round(top - y, 3))  # Graphviz prints 2-3 decimals; keep JSON short

    positions: dict[str, Point] = {}
    for obj in answer.get("objects", []):
        name = obj.get("name", "")
        if name.startswith("n") and "pos" in obj:
            positions[request.nodes[int(name[1:])].id] = flip(*_floats(obj["pos"]))
    missing = len(request.nodes) - len(positions)
    if missing:
        raise LayoutError(f"Graphviz placed only {len(positions)} of {len(request.nodes)} nodes of {_name(request)}")

    routes = [EdgeRoute(e.src, e.dst) for e in request.edges]
    for edge in answer.get("edges", []):
        if "k" in edge and "pos" in edge:
            route = routes[int(edge["k"])]
            route.points, route.head = _spline(edge["pos"], flip)
    return LayoutResult(positions, routes, right - left, top - bottom, seconds)


def _spline(pos: str, flip) -> tuple[list[Point], Point | None]:
    """Parse an edge `pos`: 'e,x,y s,x,y x1,y1 x2,y2 ...' (arrow end, arrow start, then 1+3k control points)."""
    points: list[Point] = []
    head: Point | None = None
    for token in pos.split(";")[0].split():
        if token.startswith("e,"):
            head = flip(*_floats(token[2:]))
        elif token.startswith("s,"):
            continue  # an arrow at the tail: we never ask for one
        else:
            points.append(flip(*_floats(token)))
    return points, head


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(","))


def _name(request: LayoutRequest) -> str:
    label = f" {request.key_hint!r}" if request.key_hint else ""
    return f"the graph{label} ({len(request.nodes)} nodes, {len(request.edges)} edges)"
