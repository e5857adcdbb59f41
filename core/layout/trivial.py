"""Layouts that need no Graphviz: a graph of one node (or none) is that node at the drawing's centre.

A deep chain of module groups that each hold only the next one (a crafted archive's 3,000-deep module stack, or
nested containers) would otherwise cost one round trip to the layout child per level. The answer is exactly what
`dot` gives for one fixed-size node: the drawing is the node's size, the node at its centre, no edge routed.
"""
from __future__ import annotations

from pt2_viewer.core.layout.records import EdgeRoute, LayoutRequest, LayoutResult


def trivial_layout(request: LayoutRequest) -> LayoutResult | None:
    """The layout of a request with at most one node, or None when Graphviz is needed."""
    if len(request.nodes) > 1:
        return None
    routes = [EdgeRoute(e.src, e.dst) for e in request.edges]  # a self-loop or a dangling edge: never routed
    if not request.nodes:
        return LayoutResult({}, routes, 0.0, 0.0, 0.0)
    node = request.nodes[0]
    return LayoutResult({node.id: (round(node.width / 2, 3), round(node.height / 2, 3))}, routes,
                        node.width, node.height, 0.0)
