"""Each ONNX node's link to the node of its source program (a `.pt2`) that it came from, torch-free.

torch's dynamo exporter names on every ONNX node the FX node it came from (core/onnx/provenance.py), but in the
program it decomposed, not the `.pt2`: decomposition renames (a BatchNorm's `_native_batch_norm_legit_no_training_1`
is `batch_norm_1` in the `.pt2`) and shifts names (an `unflatten` decomposed into a `view` makes every later `view_k`
of the decomposed program the `.pt2`'s `view_{k-1}`). So a link is found:
1. by name, where the source has a node of the FX node's name, of its op and in its module, and nothing below
   says otherwise: exact;
2. else among the source nodes of the FX node's module (`name_scopes`) made on its line (the stack trace, which a
   decomposition keeps), else of its module, by op and order: the FX nodes and the source nodes aligned as two
   sequences of ops (the longest matching runs, as difflib finds them), what is left by name, then by order (the
   k-th left FX node to the k-th left source node; past their end, the one the FX node before it went to). A link to
   a node of another name than the FX node's is marked `approximate`.
A node with no metadata (a TorchScript export's) has no link. The map the viewer makes when it exports itself
(`lower --to onnx` keeps the decomposition's `from_node`) is exact and replaces this one where it exists.
"""
from __future__ import annotations

from difflib import SequenceMatcher

from pt2_viewer.core.model.program import Graph, Node, NodeOp
from pt2_viewer.core.onnx.provenance import SourceLink


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
    for (module, trace), names in lines.items():
        _align(names, [fx_nodes[f][1] for f in names], source_lines[(module, trace)], module, found)
    for module, names in modules.items():
        _align(names, [fx_nodes[f][1] for f in names], by_module.get(module, []), module, found)
    return {onnx_name: found[fx] for fx, names in users.items() if fx in found for onnx_name in names}


def _trace(node: Node) -> tuple[tuple[str, int], ...]:
    return tuple((f.file, f.line) for f in node.stack)


def _align(names: list[str], ops: list[str], nodes: list[Node], module: str, found: dict[str, SourceLink]) -> None:
    """Link the FX nodes `names` (ops `ops`) of one module to that module's source nodes `nodes`: aligned by op,
    then by name, then by order. A link to the node of the FX node's own name is exact, any other approximate."""
    matcher = SequenceMatcher(None, ops, [_op(n.target) for n in nodes], autojunk=False)
    pairs: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        pairs.update((block.a + k, block.b + k) for k in range(block.size))
    used = set(pairs.values())
    index = {n.name: j for j, n in enumerate(nodes)}
    for i, name in enumerate(names):  # not aligned: the source node of its name, if free and of its op
        j = index.get(name)
        if i not in pairs and j is not None and j not in used and _op(nodes[j].target) == ops[i]:
            pairs[i] = j
            used.add(j)
    rest = [j for j in range(len(nodes)) if j not in used]
    for k, i in enumerate(i for i in range(len(names)) if i not in pairs):
        if rest:
            pairs[i] = rest[min(k, len(rest) - 1)]
        elif nodes:  # more FX nodes than source nodes: one op became several, the nearest earlier one's
            pairs[i] = next((pairs[p] for p in range(i - 1, -1, -1) if p in pairs), 0)
    for i, name in enumerate(names):
        j = pairs.get(i)
        target = nodes[j].name if j is not None else None
        found[name] = SourceLink(target, module, approximate=target != name)
