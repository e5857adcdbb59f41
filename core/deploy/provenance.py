"""Which source node an FX node of a lowered (edge) program came from, through torch's `from_node` chain.

`to_edge_transform_and_lower` decomposes the source program; every node it makes records the node it was traced
from (`node.meta["from_node"]`, a chain of `NodeSource`s naming a node and the id of its graph). The nodes are matched
as ExecuTorch's Inspector matches them when it propagates debug handles back to the source
(`get_ancestor_node_identifiers`: `NAME.GRAPH_ID` along the chain), so a lowering's verdicts and its ETRecord's
mapping agree.
"""
from __future__ import annotations

import operator
from typing import Any


def source_index(ep: Any) -> dict[str, str]:
    """Identifier -> source node name, as ExecuTorch's Inspector matches nodes across the lowering
    (`propagate_back_debug_handle`): `NAME.GRAPH_ID` of each source node, then of its own ancestors (a source node
    traced from an earlier program), the nearest claim winning."""
    from executorch.devtools.inspector._inspector_utils import get_ancestor_node_identifiers

    graph_id = id(ep.graph)
    index: dict[str, str] = {}
    nodes = [n for n in ep.graph.nodes if n.op not in ("placeholder", "output")]
    for n in nodes:
        index[f"{n.name}.{graph_id}"] = n.name
    for n in nodes:
        for ancestor in get_ancestor_node_identifiers(n):
            index.setdefault(ancestor, n.name)
    return index


def source_names(node: Any, index: dict[str, str]) -> list[str]:
    """The source node an edge node came from: the first of its ancestors (torch's `from_node` chain, as ExecuTorch
    reads it) that `index` names; none when its provenance leads elsewhere."""
    from executorch.devtools.inspector._inspector_utils import get_ancestor_node_identifiers

    for ancestor in get_ancestor_node_identifiers(node):
        if ancestor in index:
            return [index[ancestor]]
    return []


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
