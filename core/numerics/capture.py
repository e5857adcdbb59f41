"""Stepping through a graph module one node at a time, so two runs can be compared as they go.

`steps` drives a `torch.fx.Interpreter` by hand: it yields each node's value as soon as it is computed and frees every
value after its last use, as `Interpreter.run` does, so comparing never holds more than one plain run's live values.
The helpers name what the comparison needs from a graph: the nodes the viewer shows (no `getitem`, which the archive
folds into the multi-output node), each node's inputs through those getitems, and, for a decomposition, which of
the many nodes a reference node became carries its value onward (its "exit").
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any


def is_getitem(node: Any) -> bool:
    return node.op == "call_function" and node.target is operator.getitem


def shown_name(node: Any) -> str:
    """A getitem's value belongs to the node it reads from, as the viewer shows it."""
    while is_getitem(node):
        node = node.args[0]
    return str(node.name)


def inputs_of(graph: Any) -> dict[str, list[str]]:
    """{node: [input nodes]} for the shown nodes, in the viewer's names."""
    result: dict[str, list[str]] = {}
    for n in graph.nodes:
        if is_getitem(n) or n.op == "output":
            continue
        result[n.name] = list(dict.fromkeys(shown_name(i) for i in n.all_input_nodes))
    return result


def source_nodes(graph: Any) -> set[str]:
    """The nodes a run starts from (placeholders: inputs, parameters, buffers; get_attr): never a divergence."""
    return {str(n.name) for n in graph.nodes if n.op in ("placeholder", "get_attr")}


def shown_order(graph: Any) -> list[str]:
    return [n.name for n in graph.nodes if not is_getitem(n) and n.op != "output"]


def low_precision_interpreter(gm: Any, dtype: Any) -> Any:
    """An Interpreter for a graph traced in float32 and run with its floating values cast down to `dtype`.

    Export bakes the traced dtypes in: `aten._assert_tensor_metadata` checks them (skipped here), and an op that
    mixes an explicit float32 upcast (an RMSNorm's `.float()`) with a cast-down value may refuse mixed dtypes (a
    matmul); such an op runs again with its floating arguments in `dtype`."""
    import torch
    import torch.fx

    def cast(v: Any) -> Any:
        return v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v

    class LowPrecision(torch.fx.Interpreter):
        def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
            if target is torch.ops.aten._assert_tensor_metadata.default:
                return None
            try:
                return super().call_function(target, args, kwargs)
            except RuntimeError as e:
                if "dtype" not in str(e) and "type" not in str(e):
                    raise
                import torch.utils._pytree as pytree

                return super().call_function(target, pytree.tree_map(cast, args), pytree.tree_map(cast, kwargs))

    return LowPrecision(gm, garbage_collect_values=False)


def steps(gm: Any, args: list[Any], cancelled: Callable[[], bool] = lambda: False,
          interp: Any = None) -> Iterator[tuple[Any, Any]]:
    """(node, value) for every node of `gm` run on `args` (the lifted graph's arguments), output node last;
    `interp` replaces the plain `torch.fx.Interpreter`."""
    import torch.fx

    if interp is None:
        interp = torch.fx.Interpreter(gm, garbage_collect_values=False)
    interp.env = {}
    interp.args_iter = iter(args)
    nodes = list(gm.graph.nodes)
    free_after: dict[Any, list[Any]] = {n: [] for n in nodes}
    seen: set[Any] = set()
    for n in reversed(nodes):
        for i in n.all_input_nodes:
            if i not in seen:
                seen.add(i)
                free_after[n].append(i)
    for n in nodes:
        if cancelled():
            return
        value = interp.run_node(n)
        if n.op == "output":
            yield n, value
            return
        interp.env[n] = value
        yield n, value
        for dead in free_after[n]:
            interp.env.pop(dead, None)
        if not n.users:
            interp.env.pop(n, None)


def exits(mapping_links: list[tuple[str, str]], candidate_graph: Any) -> dict[str, str]:
    """{candidate node: reference node} for the candidate node that carries each reference node's value onward.

    A reference node decomposes into many candidate nodes; the one to compare is the last (in the candidate's order)
    whose value leaves the group, i.e. is used by a node outside it or by the output."""
    group_of: dict[str, set[str]] = {}
    for ref, cand in mapping_links:
        group_of.setdefault(ref, set()).add(cand)
    position = {n.name: k for k, n in enumerate(candidate_graph.nodes)}
    by_name = {n.name: n for n in candidate_graph.nodes}
    result: dict[str, str] = {}
    for ref, group in group_of.items():
        members = sorted((c for c in group if c in by_name), key=position.__getitem__)
        if not members:
            continue
        leaving = [c for c in members if any(shown_name(u) not in group or u.op == "output"
                                             for u in by_name[c].users) or not by_name[c].users]
        chosen = (leaving or members)[-1]
        if chosen not in result:
            result[chosen] = ref
    return result
