"""Each ONNX node's link to the node of its source program (a `.pt2`) that it came from, torch-free.

torch's dynamo exporter names on every ONNX node the FX node it came from (core/onnx/provenance.py), but in the
program it decomposed, not the `.pt2`: decomposition renames (a BatchNorm's `_native_batch_norm_legit_no_training_1`
is `batch_norm_1` in the `.pt2`) and shifts names (an `unflatten` decomposed into a `view` makes every later `view_k`
of the decomposed program the `.pt2`'s `view_{k-1}`), and the ONNX optimizer drops some FX nodes. So a link is
found among the source nodes of the FX node's module (`name_scopes`) made on its line (the stack trace, which a
decomposition keeps), else among those of its module, by aligning the two sequences of ops in order
(core/onnx/alignment.py: the same op, an op the source op decomposes into, one op that became several, names
breaking ties). An FX node the optimizer dropped (`view_5` between `view_4` and `view_6` of one group) stands in
its place, so the nodes after it do not shift. A link to the node of the FX node's own name is exact; a link to a
node of another name is marked `approximate`.
A node with no metadata (a TorchScript export's) has no link. The map the viewer makes when it exports itself
(`lower --to onnx` keeps the decomposition's `from_node`) is exact and replaces this one where it exists.
"""
from __future__ import annotations

import re

from pt2_viewer.core.model.program import Graph, Node, NodeOp
from pt2_viewer.core.onnx.alignment import Item, align
from pt2_viewer.core.onnx.provenance import SourceLink

_INDEXED = re.compile(r"^(.*)_(\d+)$")
_MAX_GAP = 16  # more FX nodes of one name missing in a row than this: not one group's, no stand-ins


def _op(target: str) -> str:
    """`torch.ops.aten.view.default` or `aten.view.default` -> `aten.view`: the op without its overload."""
    parts = target.removeprefix("torch.ops.").split(".")
    return ".".join(parts[:2])


def source_links(onnx_graph: Graph, source: Graph) -> dict[str, SourceLink]:
    """ONNX node name -> its link into `source` (a program's top graph), for every node that names an FX node."""
    by_name = {n.name: n for n in source.nodes if n.op is NodeOp.CALL_FUNCTION}
    by_module: dict[str, list[Node]] = {}
    for n in by_name.values():
        by_module.setdefault(n.module_path, []).append(n)
    fx_nodes: dict[str, tuple[str, str]] = {}  # FX node -> (module, op), in the order the ONNX graph first names it
    users: dict[str, list[str]] = {}  # FX node -> the ONNX nodes it became
    for node in onnx_graph.nodes:
        fx = node.metadata.get("FX node")
        if fx is not None and node.op is NodeOp.CALL_FUNCTION:
            fx_nodes.setdefault(fx, (node.module_path, _op(node.metadata.get("FX target", ""))))
            users.setdefault(fx, []).append(node.name)
    # nodes made on one line of one module first: a decomposition keeps its source node's stack trace, so the
    # nodes an op became (a `diff` as slices, a `sub` and a `cat`) are found on that op's line
    traces = {node.metadata["FX node"]: _trace(node) for node in onnx_graph.nodes if node.metadata.get("FX node")}
    source_lines: dict[tuple[str, tuple[tuple[str, int], ...]], list[Node]] = {}
    for n in by_name.values():
        source_lines.setdefault((n.module_path, _trace(n)), []).append(n)
    found: dict[str, SourceLink] = {}
    lines: dict[tuple[str, tuple[tuple[str, int], ...]], list[str]] = {}
    modules: dict[str, list[str]] = {}
    for fx, (module, _) in fx_nodes.items():
        key = (module, traces.get(fx, ()))
        if key[1] and key in source_lines:
            lines.setdefault(key, []).append(fx)
        else:
            modules.setdefault(module, []).append(fx)
    group: dict[str, object] = {fx: key for key, names in lines.items() for fx in names}
    group.update({fx: module for module, names in modules.items() for fx in names})
    phantoms = _phantoms(list(fx_nodes), group)
    for (module, trace), names in lines.items():
        _align(names, [fx_nodes[f][1] for f in names], source_lines[(module, trace)], module, found, phantoms)
    for module, names in modules.items():
        _align(names, [fx_nodes[f][1] for f in names], by_module.get(module, []), module, found, phantoms)
    return {onnx_name: found[fx] for fx, names in users.items() if fx in found for onnx_name in names}


def _trace(node: Node) -> tuple[tuple[str, int], ...]:
    return tuple((f.file, f.line) for f in node.stack)


def _phantoms(order: list[str], group: dict[str, object]) -> dict[str, list[str]]:
    """FX node -> the FX nodes of its name's sequence missing just before it in its group: the ONNX optimizer
    dropped them (`view_4`, then `view_6`: `view_5` was folded away). Each stands in the alignment for the source
    node it came from, so the nodes after it do not shift onto that node."""
    last: dict[str, tuple[int, str]] = {}
    out: dict[str, list[str]] = {}
    for fx in order:
        m = _INDEXED.match(fx)
        base, k = (m.group(1), int(m.group(2))) if m else (fx, 0)
        before = last.get(base)
        if before is not None and 1 < k - before[0] <= _MAX_GAP and group[before[1]] == group[fx]:
            out[fx] = [f"{base}_{x}" for x in range(before[0] + 1, k)]
        last[base] = (k, fx)
    return out


def _align(names: list[str], ops: list[str], nodes: list[Node], module: str, found: dict[str, SourceLink],
           phantoms: dict[str, list[str]]) -> None:
    """Link the FX nodes `names` (ops `ops`) of one module (or line) to its source nodes `nodes` (core/onnx/
    alignment.py), with the FX nodes the optimizer dropped standing in their places. A link to the node of the FX
    node's own name is exact, any other approximate."""
    items: list[Item] = []
    real: list[int] = []
    for name, op in zip(names, ops, strict=True):
        items.extend(Item(p, op) for p in phantoms.get(name, ()))
        real.append(len(items))
        items.append(Item(name, op))
    pairs = align(items, [Item(n.name, _op(n.target)) for n in nodes])
    for name, i in zip(names, real, strict=True):
        j = pairs[i]
        target = nodes[j].name if j is not None else None
        found[name] = SourceLink(target, module, approximate=target != name)
