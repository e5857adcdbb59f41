"""What the Details panel says about a module group the user clicked (a collapsed box or an expanded frame's title):
the module and its class, what it holds (counted as its box counts it), its ops, the values that come in and go out,
its weights and the groups inside it.

Help > Keyboard Shortcuts says "Click: select a node or a collapsed group; Details shows it": before this, a group's
click showed the program's properties, as if nothing were selected.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from pt2_viewer.core.graph.details import DetailRow, DetailSection, NodeDetails, NodeLink
from pt2_viewer.core.graph.index import GraphIndex, ModuleGroup
from pt2_viewer.core.graph.op_stats import op_of_target
from pt2_viewer.core.graph.readable import type_text
from pt2_viewer.core.graph.summary import OpCount, group_count_text, group_count_tip
from pt2_viewer.core.model.program import Graph, Node, NodeOp
from pt2_viewer.core.util.words import plural

MAX_ROWS = 40  # per section: a group of a 10k-node program lists its first values, and says how many more


def find_group(index: GraphIndex, path: str) -> ModuleGroup | None:
    """The group with id `path` in the graph's module tree (chunks of a long group included), or None."""
    return next((g for g in index.modules.walk() if g.path == path), None)


def group_details(graph: Graph, index: GraphIndex, path: str) -> NodeDetails:
    """Everything the Details panel shows about the group `path` of `graph`. Raises KeyError for no such group."""
    group = find_group(index, path)
    if group is None:
        raise KeyError(f"There is no module group '{path}' in this graph.")
    inside = {name for g in group.walk() for name in g.nodes}
    nodes = [graph.node_by_name[n] for n in sorted(inside, key=_order(graph)) if n in graph.node_by_name]
    ops = [n for n in nodes if n.op is NodeOp.CALL_FUNCTION]
    sections = [
        _module(group, len(ops), len(nodes)),
        _op_counts(ops),
        _crossing(graph, "Inputs", [(e.src, e.value) for e in graph.edges if e.dst in inside and e.src not in inside]),
        _crossing(graph, "Outputs", [(e.src, e.value) for e in graph.edges if e.src in inside and e.dst not in inside]),
        _weights(graph, index, group, [n for n in nodes if n.op is NodeOp.PLACEHOLDER]),
        DetailSection("Groups inside",
                      _capped([DetailRow(c.path, c.title, note=_holds(graph, c)) for c in group.children])),
    ]
    title = group.path or "(model)"
    return NodeDetails(title, group.title, "group", [s for s in sections if s.rows])


def _order(graph: Graph) -> Callable[[str], int]:
    """Sorts node names as the graph lists them."""
    place = {n.name: i for i, n in enumerate(graph.nodes)}
    return lambda name: place.get(name, len(place))


def _module(group: ModuleGroup, ops: int, nodes: int) -> DetailSection:
    rows = [DetailRow("path", group.path or "(root)")]
    if group.class_name:
        rows.append(DetailRow("class", group.short_class, note=group.class_name))
    if group.call:
        rows.append(DetailRow("call", f"{group.call + 1} of the module's calls", note=group.module or ""))
    if group.parent is not None:
        rows.append(DetailRow("inside", group.parent.path or "(model)", note=group.parent.short_class))
    rows.append(DetailRow("holds", group_count_tip(ops, nodes)))
    if group.children:
        rows.append(DetailRow("groups", plural(len(group.children), "group") + " directly inside"))
    return DetailSection("Module", rows)


def _op_counts(ops: list[Node]) -> DetailSection:
    counts = Counter(op_of_target(n.target) for n in ops)
    return DetailSection("Ops", _capped([DetailRow(OpCount(op, count).short, f"× {count:,}", note=op)
                                         for op, count in counts.most_common()]))


def _crossing(graph: Graph, title: str, links: list[tuple[str, str]]) -> DetailSection:
    """The values an edge carries across the group's border, once each, linked to the node that makes them."""
    rows = []
    for src, value_name in dict.fromkeys(links):
        value = graph.values.get(value_name)
        note = (type_text(value) or value.kind) if value is not None else ""
        rows.append(DetailRow(value_name, f"from {src}" if src != value_name else src, NodeLink(src), note=note))
    return DetailSection(title, _capped(rows))


def _weights(graph: Graph, index: GraphIndex, group: ModuleGroup, inputs: list[Node]) -> DetailSection:
    """Each weight by its name inside the module (`ln1.weight`), its type, and its placeholder as the link."""
    rows = []
    prefix = f"{group.module}." if group.module else ""
    for node in inputs:
        value = graph.values.get(node.outputs[0]) if node.outputs and node.outputs[0] else None
        target = index.targets.get(node.name, node.name)
        label = target.removeprefix(prefix)
        rows.append(DetailRow(label, node.name, NodeLink(node.name), note=type_text(value) if value else ""))
    return DetailSection("Weights and inputs", _capped(rows))


def _holds(graph: Graph, group: ModuleGroup) -> str:
    """What a group inside says it holds, as its box says it."""
    names = [n for g in group.walk() for n in g.nodes]
    ops = sum(1 for n in names if (node := graph.node_by_name.get(n)) is not None and node.op is NodeOp.CALL_FUNCTION)
    return group_count_text(ops, len(names))


def _capped(rows: list[DetailRow]) -> list[DetailRow]:
    if len(rows) <= MAX_ROWS:
        return rows
    return [*rows[:MAX_ROWS], DetailRow("…", f"{len(rows) - MAX_ROWS:,} more", muted=True)]


__all__ = ["find_group", "group_details"]
