"""Which nodes of an ONNX model an ONNX Runtime profile event's node name stands for.

ONNX Runtime names a node event `NAME_kernel_time` (and `NAME_fence_before`, `NAME_fence_after`), NAME the node as
the session ran it. Without graph optimizations (`graph_optimization_level = ORT_DISABLE_ALL`) that is the model's
node name. Its optimizer (on by default) renames what it rewrites, and those names are followed back here:
- a fusion keeps the fused node's name and appends its rule: `node_MatMul_1/MatMulAddFusion`,
  `node_MatMul_73/MatMulScaleFusion//MatmulTransposeFusion/`: the model's `node_MatMul_1`;
- the NCHWc layout names a node by the value it writes: `relu_nchwc`, `/relu/Relu_output_0_nchwc`. That value's
  producer, and where the event's op (`Conv`) is not the producer's (a Relu it fused), the path back through the
  activations and Adds it took in (Relu <- Add <- Conv) to the nearest node of the event's op: the group shares the
  time;
- `_token_N` makes a name unique;
- a node that has no event of its own, an activation or Add the session ran inside the node before it (a FusedConv
  with its Relu, an NCHWc Conv with the residual Add and Relu after it, a Gemm with its Add), shares that node's
  time (`fused_into`): its input's producer of such an op (FUSED_INTO) that has time, the latest in graph order
  where several have.
Nodes the optimizer made itself (`ReorderOutput`, `gemm_input_reshape`, `Transpose_token_33`) stand for no node: their
time is unattributed. The program is core/onnx/program_map.py's: each node keeps the file's name as "ONNX node"."""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from pt2_viewer.core.model.program import Graph, Node, NodeOp, Program
from pt2_viewer.core.onnx.program_map import identifier

SUFFIXES = ("_kernel_time", "_fence_before", "_fence_after")
KERNEL_TIME = "_kernel_time"
_FUSION_TAIL = re.compile(r"(?:/\w*Fusion/?|/)+$")  # /MatMulAddFusion, //MatmulTransposeFusion/
_TOKEN = re.compile(r"_token_\d+$")
_NCHWC = "_nchwc"
# Ops ONNX Runtime takes into the node before them (Conv+Relu, Conv+Add+Relu, Gemm+Relu): walked back through
FUSED_AFTER = frozenset({"Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "Tanh", "Add", "Sum",
                         "BatchNormalization", "Mul", "HardSwish"})
# Ops ONNX Runtime fuses those into (FusedConv, an NCHWc Conv with its Sum, FusedGemm, MatMul+Add as Gemm)
FUSED_INTO = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul"})
_MAX_WALK = 4  # nodes walked back from a value to the op that computed it


@dataclass
class ModelNodes:
    """The program's top-graph nodes by the names ONNX Runtime knows them by, the producer of each value, and the
    names of nodes inside subgraphs (an If's, a Loop's), whose time their If or Loop's own event already holds."""

    by_name: dict[str, Node] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)  # the program's name of each node -> its place in the graph
    producer: dict[str, Node] = field(default_factory=dict)  # program value name -> the node that writes it
    nested: set[str] = field(default_factory=set)

    def op(self, node: Node) -> str:
        return node.whole_target.rpartition(".")[2]


def model_nodes(program: Program) -> ModelNodes:
    out = ModelNodes()
    for node in program.graph.nodes:
        if node.op is not NodeOp.CALL_FUNCTION:
            continue
        out.by_name[node.metadata.get("ONNX node", node.name)] = node
        out.order[node.name] = len(out.order)
        for value in node.outputs:
            if value:
                out.producer[value] = node
        for sub in node.subgraphs:
            _nested(sub, out.nested, 0)
    return out


def _nested(graph: Graph, names: set[str], depth: int) -> None:
    if depth > 32:  # core/onnx/reader.py reads no deeper
        return
    for node in graph.nodes:
        if node.op is NodeOp.CALL_FUNCTION:
            names.add(node.metadata.get("ONNX node", node.name))
        for sub in node.subgraphs:
            _nested(sub, names, depth + 1)


def node_name(event_name: str) -> tuple[str, str]:
    """(the node's name, the suffix): `node_Conv_17_kernel_time` -> (`node_Conv_17`, `_kernel_time`); no suffix ->
    (the name, "")."""
    for suffix in SUFFIXES:
        if event_name.endswith(suffix):
            return event_name[: -len(suffix)], suffix
    return event_name, ""


def resolve(name: str, op_name: str, model: ModelNodes) -> list[Node]:
    """The model nodes the session's node `name` (running `op_name`) computes; empty for one the optimizer made, or
    a node of the name that runs another op (another model's)."""
    node = model.by_name.get(name)
    if node is not None:
        return [node] if _same_op(op_name, model.op(node)) else []
    base = _FUSION_TAIL.sub("", name)
    if base != name and base in model.by_name:
        return [model.by_name[base]]
    base = _TOKEN.sub("", name)
    if base.endswith(_NCHWC):
        return _computed(base[: -len(_NCHWC)], op_name, model)
    return []


def _same_op(op_name: str, op: str) -> bool:
    """The session ran the node as its own op, or fused others into it (Conv as FusedConv); no op said: trusted."""
    return not op_name or op_name in (op, f"Fused{op}")


def _computed(value: str, op_name: str, model: ModelNodes) -> list[Node]:
    """The node that writes `value` and, where it is an activation or Add the event's `op_name` took in, the path
    back to the nearest node of that op (breadth first, a few nodes deep)."""
    start = model.producer.get(identifier(value, "value"))
    if start is None:
        return []
    queue: deque[tuple[Node, tuple[Node, ...]]] = deque([(start, (start,))])
    while queue:
        node, path = queue.popleft()
        op = model.op(node)
        if not op_name or op == op_name:
            return list(reversed(path))
        if op not in FUSED_AFTER or len(path) >= _MAX_WALK:
            continue
        for ref in node.input_refs():
            before = model.producer.get(ref)
            if before is not None and all(before is not p for p in path):
                queue.append((before, (*path, before)))
    return []


def fused_into(timed: set[str], model: ModelNodes) -> dict[str, list[str]]:
    """Node with time (the program's name) -> the nodes without events of their own that ran inside it."""
    out: dict[str, list[str]] = {}
    for node in model.by_name.values():
        if node.name in timed or model.op(node) not in FUSED_AFTER:
            continue
        host = _host(node, timed, model, 0)
        if host is not None:
            out.setdefault(host, []).append(node.name)
    return out


def _host(node: Node, timed: set[str], model: ModelNodes, depth: int) -> str | None:
    """The node with time that `node` (an activation or Add without time) ran inside: the latest of its producers
    that have time and are ops ONNX Runtime fuses into (FUSED_INTO); else through a producer without time too."""
    producers = [p for p in (model.producer.get(ref) for ref in node.input_refs()) if p is not None]
    hosts = [p.name for p in producers if p.name in timed and model.op(p) in FUSED_INTO]
    if not hosts and depth < _MAX_WALK:
        hosts = [h for p in producers if p.name not in timed and model.op(p) in FUSED_AFTER
                 for h in [_host(p, timed, model, depth + 1)] if h is not None]
    return max(hosts, key=lambda h: model.order.get(h, -1)) if hosts else None
