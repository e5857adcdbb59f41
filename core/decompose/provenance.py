"""Where each node of a decomposed program came from, read from torch's metadata on the FX nodes.

`run_decompositions` records on every new node the node it was traced from (`node.meta["from_node"]`, a chain of
`NodeSource`s). That is the exact answer, used first. Nodes without it (placeholders, or torch versions that drop it)
fall back to the same name and target, then to the same stack trace, then to the same module (`nn_module_stack`).
Each link records its method, so the GUI can say how it knows.

`operator.getitem` nodes are left out on both sides: the `.pt2` format, and so the viewer's reader, folds them into
the multi-output node they read from, and the mapping must name nodes the viewer can show. The FX graphs come from a
worker job; this module itself never imports torch.
"""
from __future__ import annotations

import operator
from typing import Any

from pt2_viewer.core.compare.mapping import Link, NodeMapping, op_stem


def shown_nodes(graph: Any) -> list[Any]:
    """The FX nodes that exist in the saved archive (no getitem nodes)."""
    return [n for n in graph.nodes if not (n.op == "call_function" and n.target is operator.getitem)]


def module_path(node: Any) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    return str(path)


def target_text(node: Any) -> str:
    """'aten.conv2d.default' for an ATen op, 'higher_order.cond' for a HOP, '_operator.add' for a Python builtin."""
    t = node.target
    if isinstance(t, str):
        return t
    if hasattr(t, "overloadpacket"):  # OpOverload: str() is "aten.conv2d.default"
        return str(t)
    if type(t).__module__.startswith("torch._higher_order_ops"):
        return f"higher_order.{getattr(t, '__name__', str(t))}"
    return f"{getattr(t, '__module__', '')}.{getattr(t, '__name__', str(t))}"


def _from_node_sources(node: Any, names: set[str]) -> list[str]:
    """Breadth first through the `from_node` chain: the first level that names nodes of the before graph."""
    level = list(node.meta.get("from_node") or [])
    seen: set[int] = set()
    while level:
        found: list[str] = []
        for src in level:
            if src.name in names and src.name not in found:
                found.append(src.name)
        if found:
            return found
        nxt: list[Any] = []
        for src in level:
            if id(src) not in seen:
                seen.add(id(src))
                nxt.extend(getattr(src, "from_node", None) or [])
        level = nxt
    return []


def provenance_mapping(before_graph: Any, after_graph: Any, before_label: str = "",
                       after_label: str = "") -> NodeMapping:
    """Map the nodes of `before_graph` to those of `after_graph` (FX graphs), most trusted evidence first."""
    before = shown_nodes(before_graph)
    after = shown_nodes(after_graph)
    by_name = {n.name: n for n in before}
    names = set(by_name)
    index_b = {n.name: i for i, n in enumerate(before)}
    by_stack: dict[tuple[str, str], list[Any]] = {}
    by_module: dict[str, list[Any]] = {}
    for n in before:
        trace = n.meta.get("stack_trace")
        if trace:
            by_stack.setdefault((trace, module_path(n)), []).append(n)
        if module_path(n):
            by_module.setdefault(module_path(n), []).append(n)

    links: list[Link] = []
    nb, na = max(len(before), 1), max(len(after), 1)

    def nearest(cands: list[Any], i: int, stem: str) -> Any:
        same_op = [c for c in cands if op_stem(target_text(c)) == stem]
        return min(same_op or cands, key=lambda c: abs((index_b[c.name] + 0.5) / nb - (i + 0.5) / na))

    for i, a in enumerate(after):
        if a.op in ("placeholder", "output"):
            if a.name in by_name:
                links.append(Link(a.name, a.name, "name"))
            continue
        sources = _from_node_sources(a, names)
        if sources:
            links.extend(Link(s, a.name, "from_node") for s in sources)
            continue
        b = by_name.get(a.name)
        if b is not None and target_text(b) == target_text(a):
            links.append(Link(b.name, a.name, "name+target"))
            continue
        stem = op_stem(target_text(a))
        trace = a.meta.get("stack_trace")
        cands = by_stack.get((trace, module_path(a))) if trace else None
        if cands:
            links.append(Link(nearest(cands, i, stem).name, a.name, "stack_trace"))
            continue
        cands = by_module.get(module_path(a)) if module_path(a) else None
        if cands:
            links.append(Link(nearest(cands, i, stem).name, a.name, "module_path"))
    return NodeMapping(before_nodes=[n.name for n in before], after_nodes=[n.name for n in after], links=links,
                       before_label=before_label, after_label=after_label)
