"""Which source nodes an FX node of a lowered (edge) program came from, through torch's `from_node` chain.

`to_edge_transform_and_lower` decomposes the source program; every node it makes records the node it was traced
from (`node.meta["from_node"]`, a chain of `NodeSource`s). The first level of that chain naming nodes of the source
is the answer. (core/decompose/provenance.py reads the same chain for decompositions; that package sits above this
one in the layers, so the few lines are here too.)
"""
from __future__ import annotations

import operator
from typing import Any


def source_names(node: Any, names: set[str]) -> list[str]:
    """The source nodes (`names`) `node` was made from, breadth first through its `from_node` chain; a node keeping
    its source name (a placeholder) is its own source."""
    level = list(node.meta.get("from_node") or [])
    seen: set[int] = set()
    while level:
        found = list(dict.fromkeys(src.name for src in level if src.name in names))
        if found:
            return found
        nxt: list[Any] = []
        for src in level:
            if id(src) not in seen:
                seen.add(id(src))
                nxt.extend(getattr(src, "from_node", None) or [])
        level = nxt
    return [node.name] if node.name in names and node.op != "call_function" else []


def target_text(target: Any) -> str:
    """'aten.conv2d.default' for an op, as the viewer spells targets; an edge-dialect op (which wraps an OpOverload
    in `_op`) reads as its ATen op."""
    if isinstance(target, str):
        return target
    op = getattr(target, "_op", None)
    if op is not None and hasattr(op, "overloadpacket"):
        return str(op)
    if hasattr(target, "overloadpacket"):
        return str(target)
    return f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', str(target))}"


def call_nodes(graph: Any) -> list[Any]:
    """The graph's call_function nodes the viewer shows (getitem nodes are folded into what they read)."""
    return [n for n in graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
