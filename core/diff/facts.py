"""What the diff compares about each node of a program, read once: its module group, op, outputs, arguments.

The matcher and the classifier ask the same few questions of every node many times (which module call made it, what
its outputs' dtypes and shapes are, which nodes feed it, what its literal arguments are); `ProgramFacts` answers them
once per program from the reader's `Program` and the graph index's module tree (core/graph/index.py), so a diff of
two 10k-node programs parses each tensor's metadata once. Only the top graph is compared; HOP subgraphs count as part
of the node that owns them (their op counts show in the node's `args`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.model.program import Graph, InputKind, Node, NodeOp, Program, Ref, Value
from pt2_viewer.core.model.tensor_meta import DTYPE_SHORT, SymDim

OP_PREFIX = "torch.ops."
# ops that exist only because a dim is symbolic: a static export has none of them
DYNAMIC_OPS = frozenset({
    "aten.sym_size.int", "aten.sym_stride.int", "aten.sym_numel.default", "aten.sym_storage_offset.default",
    "aten._assert_scalar.default", "aten.sym_constrain_range_for_size.default", "aten.sym_constrain_range.default",
    "aten._assert_async.msg", "aten.sym_is_contiguous.default",
})

Dim = int | float | bool | SymDim | None


@dataclass(frozen=True)
class Output:
    """One output of a node: a tensor's dtype and sizes, or a symbolic value's expression."""

    kind: str  # "tensor", "sym_int", ... (core/model/program.py Value.kind); "none" for a None output
    dtype: str | None = None
    sizes: tuple[Dim, ...] | None = None

    @property
    def text(self) -> str:
        if self.dtype is None:
            return self.kind
        dims = ", ".join(str(d) for d in self.sizes or ())
        return f"{DTYPE_SHORT.get(self.dtype, self.dtype)}[{dims}]"


@dataclass
class NodeFacts:
    name: str
    index: int  # position in the graph
    op: NodeOp
    target: str  # "aten.linear.default" (the archive's `torch.ops.` prefix dropped); a placeholder's own name
    group: str  # the module call that made it (GraphIndex group id: "layers.3", "relu@1"); "" at the root
    module: str  # the module path itself ("layers.3")
    values: tuple[Value | None, ...]  # its outputs (None for an output that is None); `outputs` parses them
    producers: tuple[str | None, ...]  # per value reference in the arguments: the producing node (None: a graph input)
    literal: str  # the arguments with every reference written as `%`
    input_key: str | None = None  # a placeholder's signature identity: "PARAMETER:fc.weight", "USER_INPUT:0"
    subgraph_ops: tuple[str, ...] = ()  # ops of a HOP's subgraphs, in order
    provenance: str | None = None  # torch's `from_node` metadata (JSON text), read by `from_node()` when asked
    users: list[str] = field(default_factory=list)

    def from_node(self) -> tuple[str, ...]:
        """The node(s) it was traced from, nearest first (torch's provenance)."""
        return _from_node(self.provenance)

    @property
    def stem(self) -> str:
        """'aten.add_.Tensor' -> 'add': the op without namespace, overload or in-place underscore."""
        if self.op is not NodeOp.CALL_FUNCTION:
            return self.op.value
        parts = self.target.split(".")
        name = parts[1] if len(parts) > 2 else parts[-1]
        return name.rstrip("_") or name

    @cached_property
    def outputs(self) -> tuple[Output, ...]:
        """Each output's dtype and sizes, parsed when first asked (a pair whose metadata is the same JSON on both
        sides is never parsed: `raw`)."""
        return tuple(_output(v) for v in self.values)

    @property
    def raw(self) -> tuple[object, ...]:
        """The outputs as the archive spells them: equal on two nodes means equal types, symbols named alike."""
        return tuple((v.kind, v.meta_json, str(v.expr) if v.expr is not None else None) if v is not None else None
                     for v in self.values)

    @property
    def dynamic_only(self) -> bool:
        """A node that exists only because a dim is symbolic (`sym_size`, a range assert)."""
        if self.target in DYNAMIC_OPS:
            return True
        return self.op is NodeOp.CALL_FUNCTION and bool(self.values) and \
            all(v is not None and v.kind.startswith("sym_") for v in self.values)


class ProgramFacts:
    """Every top-graph node's facts, in graph order, with the module tree they sit in."""

    def __init__(self, program: Program) -> None:
        self.program = program
        graph = program.graph
        targets = {s.name: s.target for s in program.signature.inputs
                   if s.target and s.kind is not InputKind.USER_INPUT}
        self.index = GraphIndex(graph, targets=targets)
        group_of: dict[str, str] = {}
        module_of: dict[str, str] = {}
        for g in self.index.modules.walk():
            for n in g.nodes:
                group_of[n] = g.path
                module_of[n] = g.module or ""
        producer = {v.name: v.producer for v in graph.values.values()}
        keys = _input_keys(program)
        self.nodes: list[NodeFacts] = []
        for i, node in enumerate(graph.nodes):
            refs = node.input_refs()
            self.nodes.append(NodeFacts(
                name=node.name, index=i, op=node.op, target=_target(node), group=group_of.get(node.name, ""),
                module=module_of.get(node.name, ""),
                values=tuple(graph.values.get(o, _UNKNOWN) if o is not None else None for o in node.outputs),
                producers=tuple(producer.get(r) for r in refs), literal=_literal([a.value for a in node.inputs]),
                input_key=keys.get(node.name), subgraph_ops=_subgraph_ops(node),
                provenance=node.metadata.get("from_node")))
        self.by_name = {n.name: n for n in self.nodes}
        # made by a pass (a decomposition), not by export: its nodes say what they were traced from
        self.has_provenance = any(n.provenance for n in self.nodes)
        for facts in self.nodes:
            for p in dict.fromkeys(p for p in facts.producers if p):
                if p in self.by_name:
                    self.by_name[p].users.append(facts.name)


def _target(node: Node) -> str:
    t = node.target
    return t[len(OP_PREFIX):] if t.startswith(OP_PREFIX) else t


_UNKNOWN = Value("", "unknown")  # an output the graph has no value for (a damaged archive)


def _output(v: Value | None) -> Output:
    if v is None:
        return Output("none")
    if v.meta is not None:
        return Output(v.kind, v.meta.dtype, v.meta.sizes)
    if v.expr is not None:
        return Output(v.kind, None, (v.expr,))
    return Output(v.kind)


def _input_keys(program: Program) -> dict[str, str]:
    """A placeholder's identity that does not depend on its name: parameters, buffers and constants by their target,
    user inputs by position."""
    out: dict[str, str] = {}
    user = 0
    for spec in program.signature.inputs:
        if spec.kind is InputKind.USER_INPUT:
            out[spec.name] = f"USER_INPUT:{user}"
            user += 1
        else:
            out[spec.name] = f"{spec.kind.value}:{spec.target or spec.name}"
    return out


def _literal(value: Any) -> str:
    """The arguments as text, every value reference as `%` (which value it is, is the producers' business)."""
    if isinstance(value, Ref):
        return "%"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Graph):
        return "<graph>"
    return repr(value)


def _subgraph_ops(node: Node) -> tuple[str, ...]:
    return tuple(_target(n) for sg in node.subgraphs for _, g in sg.walk() for n in g.nodes
                 if n.op is NodeOp.CALL_FUNCTION)


def _from_node(text: str | None) -> tuple[str, ...]:
    """The nodes torch records this one was traced from (`from_node`), nearest first; () when absent or unreadable.
    The archive holds it as JSON text: a list of `{name, graph_id, pass_name, action, from_node: [...]}`."""
    if not text:
        return ()
    import json

    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return ()
    out: list[str] = []
    level = doc if isinstance(doc, list) else []
    for _ in range(64):  # nested chains: nearest level first, bounded
        if not level:
            break
        nxt: list[Any] = []
        for src in level:
            if isinstance(src, dict):
                name = src.get("name")
                if isinstance(name, str) and name not in out:
                    out.append(name)
                nxt.extend(src.get("from_node") or [])
        level = nxt
    return tuple(out)
