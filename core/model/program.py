"""The program model: what a .pt2 holds, as typed dataclasses and structs, read by `core/pt2/reader.py` without torch.

Mirrors torch's serialized schema (`torch/_export/serde/schema.py`) but in the shape a viewer needs: nodes know the
values they read and write, values know their producer, graphs know their data edges, and every HOP subgraph (cond
branches, map/scan/while_loop bodies) is a nested `Graph`. A multi-output op (topk, split, cond) is ONE node with
several outputs, as in the archive; torch's FX graph would add an `operator.getitem` node per output.

What a program holds by the ten thousand (`Node`, `Value`, `Argument`, `Ref`, `Edge`, and metadata.py's
`ModuleScope`) are msgspec structs with `gc=False`: the cyclic collector never tracks them, where it walked each of
them on every full collection for as long as the program was open, and again and again while it was being read. No
cycle can pass through them: a node refers to its arguments, outputs and subgraphs, an argument's value may be a
subgraph, and nothing refers back. A 10k-node program keeps ~21k objects the collector walks, where it kept 142k;
the 100k-node one reopens with 30k, not 337k (bench/README.md, issue 42). Their caches (a value's parsed metadata, a
node's parsed stacks) are fields outside what they are (their `__eq__`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import msgspec

from pt2_viewer.core.model.executorch import ExecutorchProgram
from pt2_viewer.core.model.metadata import Frame, ModuleScope, parse_module_stack, parse_stack_trace, parse_torch_fn
from pt2_viewer.core.model.tensor_meta import SymDim, TensorMeta, tensor_meta_or_none
from pt2_viewer.core.util.lazy import lazy


class NodeOp(str, Enum):
    PLACEHOLDER = "placeholder"
    CALL_FUNCTION = "call_function"
    GET_ATTR = "get_attr"
    OUTPUT = "output"


class Value(msgspec.Struct, gc=False, repr_omit_defaults=True):
    """A named value flowing through a graph: a tensor, a symbolic int/float/bool, a token or a custom object.

    A tensor's metadata is kept as the archive's JSON and parsed on first use (`meta`): a 10k-node program opens
    without parsing 13k shapes nobody has looked at yet. `pt2_viewer.core.model.tensor_meta` does the parsing.
    A struct the cyclic collector never walks (see the module): a program has one per node."""

    name: str
    kind: str  # "tensor", "sym_int", "sym_float", "sym_bool", "token", "custom_obj", "graph"
    meta_json: Any = None
    expr: SymDim | None = None  # for sym_* values: the expression it stands for
    producer: str | None = None  # name of the node that produces it
    class_fqn: str | None = None  # for custom objects
    parsed_meta: Any = msgspec.UNSET  # `meta` once parsed (or set); not part of what the value is (`__eq__`)

    @property
    def meta(self) -> TensorMeta | None:
        parsed = self.parsed_meta
        if parsed is msgspec.UNSET:
            parsed = self.parsed_meta = _parse_meta(self.meta_json)
        return parsed

    @meta.setter
    def meta(self, meta: TensorMeta | None) -> None:
        """Metadata the archive's JSON cannot hold (a dtype torch's schema has no code for, renamed symbols)."""
        self.parsed_meta = meta

    def __eq__(self, other: object) -> bool:
        if type(other) is not Value:
            return NotImplemented
        return (self.name, self.kind, self.meta_json, self.expr, self.producer, self.class_fqn) == \
            (other.name, other.kind, other.meta_json, other.expr, other.producer, other.class_fqn)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    @property
    def type_text(self) -> str:
        if self.meta is not None:
            return self.meta.short
        if self.expr is not None:
            return f"Sym({self.expr})"  # torch's own spelling in print_readable
        return self.class_fqn or self.kind


class Ref(msgspec.Struct, frozen=True, gc=False):
    """An argument that refers to a value produced elsewhere in the graph."""

    value: str


class Argument(msgspec.Struct, gc=False):
    """One input of a node: its schema name, and a Python literal in which value references are `Ref`s."""

    name: str  # schema argument name ("" for HOP operands)
    value: Any  # int/float/str/bool/None/list/dict literal, `Ref`, or a `Graph` for subgraph operands
    kind: str = "positional"  # or "keyword"

    def refs(self) -> list[str]:
        out: list[str] = []
        collect_refs(self.value, out)
        return out


def collect_refs(v: Any, out: list[str]) -> None:
    if isinstance(v, Ref):
        out.append(v.value)
    elif isinstance(v, (list, tuple)):
        for x in v:
            collect_refs(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            collect_refs(x, out)


MAX_TARGET_CHARS = 1000  # what a node keeps of its target for labels, search and counts (real ones are < 200)


def capped_text(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how long it was: what a label or an index keeps of a string a
    hostile file may make 50 MB long, so that every copy made from it stays small."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


class Node(msgspec.Struct, gc=False, repr_omit_defaults=True):
    """One FX node of a graph: its op, target, arguments, outputs and torch's metadata. A struct the cyclic collector
    never walks (see the module: a program has one per node, and a node refers to no graph that refers back to it).
    `ColumnNode` is the one the parsed-program cache builds, its inputs and metadata decoded when first read."""

    name: str
    op: NodeOp
    target: str  # as the archive spells it: "torch.ops.aten.linear.default"; a placeholder's own name. At most
    # MAX_TARGET_CHARS (capped_text): a longer one is kept whole, once, in `full_target`
    # The three sequences are tuples where the reader builds them (a tuple of strings, unlike a list, is not walked
    # by the cyclic collector once it has been looked at), lists where a builder fills them in place (core/trace,
    # core/onnx).
    inputs: Sequence[Argument] = ()
    outputs: Sequence[str | None] = ()  # value names, None for an output that is None
    metadata: dict[str, str] = msgspec.field(default_factory=dict)
    subgraphs: Sequence[Graph] = ()
    full_target: str | None = None  # the whole target when `target` is capped, for Details on demand
    # What parsing its metadata gave (`stack`, `module_stack`), kept; not part of what the node is (`__eq__`)
    parsed_stack: Any = msgspec.UNSET
    parsed_module_stack: Any = msgspec.UNSET

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Node):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in NODE_FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    @property
    def whole_target(self) -> str:
        """The target as the archive spells it, however long."""
        return self.full_target if self.full_target is not None else self.target

    @property
    def namespace(self) -> str:
        """"aten", "prims", "higher_order", a custom op's library, "_operator", "builtins" ..."""
        t = self.target
        if t.startswith("torch.ops."):
            return t.split(".")[2]
        if self.op is not NodeOp.CALL_FUNCTION:
            return ""
        return t.split(".", 1)[0]

    @property
    def op_name(self) -> str:
        """The operator without namespace and overload: "linear", "add_", "cond", "getitem"."""
        t = self.target
        if t.startswith("torch.ops."):
            parts = t.split(".")
            return parts[3] if len(parts) > 3 else parts[-1]
        return t.rsplit(".", 1)[-1]

    @property
    def overload(self) -> str:
        parts = self.target.split(".")
        return parts[4] if self.target.startswith("torch.ops.") and len(parts) > 4 else ""

    @property
    def stack(self) -> list[Frame]:
        parsed = self.parsed_stack
        if parsed is msgspec.UNSET:
            parsed = self.parsed_stack = parse_stack_trace(self.metadata.get("stack_trace"))
        return parsed

    @property
    def module_stack(self) -> tuple[ModuleScope, ...]:
        parsed = self.parsed_module_stack
        if parsed is msgspec.UNSET:
            parsed = self.parsed_module_stack = parse_module_stack(self.metadata.get("nn_module_stack"))
        return parsed

    @property
    def module_path(self) -> str:
        """Fully qualified name of the innermost module that made this node ("" at the root)."""
        scopes = self.module_stack
        return scopes[-1].path if scopes else ""

    @property
    def torch_fn(self) -> tuple[str, str] | None:
        return parse_torch_fn(self.metadata.get("torch_fn"))

    @property
    def user_frame(self) -> Frame | None:
        for f in reversed(self.stack):
            if f.is_user:
                return f
        return None

    def input_refs(self) -> list[str]:
        out: list[str] = []
        for a in self.inputs:
            v = a.value
            if isinstance(v, Ref):  # most arguments are one reference or a literal: no recursion for those
                out.append(v.value)
            elif isinstance(v, (list, tuple, dict)):
                collect_refs(v, out)
        return out



NODE_FIELDS = ("name", "op", "target", "inputs", "outputs", "metadata", "subgraphs", "full_target")  # what it is
# the fields' own slots (member descriptors), under ColumnNode's properties of the same names
_INPUTS: Any = vars(Node)["inputs"]
_METADATA: Any = vars(Node)["metadata"]


class ColumnNode(Node, gc=False, repr_omit_defaults=True):
    """A node the parsed-program cache built from its columns (core/pt2/graph_columns.py): it holds its name, op,
    target, outputs and module stack, and `fill` (a function of the node, or a (function, position) pair) decodes
    its inputs and metadata on first read; then `filled` sets both. Assigning either decodes first, so the other
    is still the file's."""

    fill: Any = None

    def _decode(self) -> None:
        fill = self.fill
        if fill is None:
            return
        if isinstance(fill, tuple):  # (fill, the node's position), for a graph whose node names repeat
            fill[0](self, fill[1])
        else:
            fill(self)  # two threads may both fill one node: the same values, computed twice

    def filled(self, inputs: Sequence[Argument], metadata: dict[str, str]) -> None:
        _INPUTS.__set__(self, inputs)
        _METADATA.__set__(self, metadata)
        self.fill = None

    @property  # type: ignore[misc]
    def inputs(self) -> Sequence[Argument]:
        self._decode()
        return _INPUTS.__get__(self, Node)

    @inputs.setter
    def inputs(self, inputs: Sequence[Argument]) -> None:
        self._decode()
        _INPUTS.__set__(self, inputs)

    @property  # type: ignore[misc]
    def metadata(self) -> dict[str, str]:
        self._decode()
        return _METADATA.__get__(self, Node)

    @metadata.setter
    def metadata(self, metadata: dict[str, str]) -> None:
        self._decode()
        _METADATA.__set__(self, metadata)


class Edge(msgspec.Struct, frozen=True, gc=False):
    """A value flowing from the node that produces it to one that uses it."""

    src: str  # producing node
    dst: str  # consuming node
    value: str  # the value carried (a subgraph's name for get_attr -> HOP)


@dataclass
class Graph:
    """An FX graph: a program's top graph or a control-flow subgraph."""

    name: str  # "" for a program's top graph, else the subgraph name ("true_graph_0")
    nodes: list[Node]
    edges: list[Edge]
    values: dict[str, Value]
    inputs: list[str | None]  # value names of the graph's inputs
    outputs: list[str | None]  # value names of the graph's outputs

    @lazy
    def node_by_name(self) -> dict[str, Node]:
        return {n.name: n for n in self.nodes}

    def walk(self, prefix: str = "") -> list[tuple[str, Graph]]:
        """This graph and every nested subgraph, with a path like "cond/true_graph_0"."""
        out = [(prefix, self)]
        for n in self.nodes:
            for sg in n.subgraphs:
                out.extend(sg.walk(f"{prefix}/{n.name}/{sg.name}".lstrip("/")))
        return out


class InputKind(str, Enum):
    USER_INPUT = "USER_INPUT"
    PARAMETER = "PARAMETER"
    BUFFER = "BUFFER"
    CONSTANT_TENSOR = "CONSTANT_TENSOR"
    CUSTOM_OBJ = "CUSTOM_OBJ"
    TOKEN = "TOKEN"


class OutputKind(str, Enum):
    USER_OUTPUT = "USER_OUTPUT"
    LOSS_OUTPUT = "LOSS_OUTPUT"
    BUFFER_MUTATION = "BUFFER_MUTATION"
    PARAMETER_MUTATION = "PARAMETER_MUTATION"
    GRADIENT_TO_PARAMETER = "GRADIENT_TO_PARAMETER"
    GRADIENT_TO_USER_INPUT = "GRADIENT_TO_USER_INPUT"
    USER_INPUT_MUTATION = "USER_INPUT_MUTATION"
    TOKEN = "TOKEN"


class InputSpec(msgspec.Struct, frozen=True, gc=False):
    """One input of the graph signature: a user input, parameter, buffer, constant or token."""

    name: str  # the placeholder's name
    kind: InputKind
    target: str | None  # the parameter/buffer/constant's fqn
    persistent: bool | None = None
    constant: Any = None  # for inputs export specialised to a constant


class OutputSpec(msgspec.Struct, frozen=True, gc=False):
    """One output of the graph signature: a user output, a buffer mutation, a gradient, ..."""

    name: str
    kind: OutputKind
    target: str | None


@dataclass
class Signature:
    """The graph signature: what each placeholder and each output of the top graph stands for."""

    inputs: list[InputSpec]
    outputs: list[OutputSpec]


# torch's symbol prefixes (torch.utils._sympy.symbol.SymT), longest first: what each kind of symbol stands for.
# `f<N>` is how torch before 2.5 named an unbacked float.
SYMBOL_KINDS: tuple[tuple[str, str, bool], ...] = (  # (prefix, kind, unbacked)
    ("zuf", "unbacked float", True), ("zf", "float", False), ("u", "unbacked int", True), ("f", "unbacked float", True),
    ("s", "size", False),
)


def symbol_kind(name: str) -> tuple[str, bool] | None:
    """(kind, unbacked) of a symbol by torch's naming (`s3`, `u0`, `zf1`, `zuf0`), or None for a name torch does
    not give a symbol."""
    for prefix, kind, unbacked in SYMBOL_KINDS:
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return kind, unbacked
    return None


@dataclass
class Symbol:
    """A symbolic dimension: `s*` backed by an input size, `u*` (int) and `zuf*` (float) unbacked: read from data,
    e.g. by `.item()` or nonzero; `zf*` a backed float."""

    name: str
    min: int | None  # None: unbounded
    max: int | None
    sources: list[str] = field(default_factory=list)  # input dims it stands for, e.g. "x.shape[0]"
    hint: int | None = None

    @property
    def unbacked(self) -> bool:
        kind = symbol_kind(self.name)
        return kind is not None and kind[1]

    @property
    def kind(self) -> str:
        """'size', 'unbacked int', 'float', 'unbacked float', or '' for a name torch's prefixes do not explain."""
        kind = symbol_kind(self.name)
        return kind[0] if kind else ""


@dataclass
class StoredTensor:
    """A weight or constant described in the archive's config JSON (its bytes are never read). Its metadata is
    parsed on first use, like `Value.meta`: a big model has thousands of weights."""

    name: str
    path: str
    meta_json: Any
    is_param: bool
    use_pickle: bool
    nbytes: int  # from the zip entry

    @lazy
    def meta(self) -> TensorMeta | None:
        return _parse_meta(self.meta_json)


_PARSED_METAS: dict[int, tuple[Any, TensorMeta | None]] = {}  # id(meta_json) -> (meta_json, its TensorMeta)
_MAX_PARSED_METAS = 4096  # what it keeps alive after a program is closed stays a few MB


def _parse_meta(meta_json: Any) -> TensorMeta | None:
    """Parse tensor metadata kept as the archive's JSON (see `Value.meta`), once per metadata object: the reader and
    the parsed-program cache give every value of one dtype, shape and strides the same (read-only) dict, so a
    10k-node program's 12,000 values parse ~30 times and share one frozen `TensorMeta` each. The memo holds the dict
    it is keyed by (an id is not reused while it lives) and is emptied past its bound."""
    if meta_json is None:
        return None
    hit = _PARSED_METAS.get(id(meta_json))
    if hit is not None and hit[0] is meta_json:
        return hit[1]
    parsed = tensor_meta_or_none(meta_json)
    if len(_PARSED_METAS) >= _MAX_PARSED_METAS:
        _PARSED_METAS.clear()
    _PARSED_METAS[id(meta_json)] = (meta_json, parsed)
    return parsed


@dataclass
class ModuleCall:
    """One entry of the module call graph: a submodule's call and the values it took and gave."""

    fqn: str
    forward_arg_names: list[str] | None
    inputs: list[str]
    outputs: list[str]


@dataclass
class Program:
    """One exported program of an archive (`model` in most): graph, signature, symbols and weights."""

    name: str  # model name inside the archive ("model")
    graph: Graph
    signature: Signature
    range_constraints: dict[str, tuple[int | None, int | None]]
    symbols: list[Symbol]
    module_call_graph: list[ModuleCall]
    weights: list[StoredTensor]
    constants: list[StoredTensor]
    dialect: str
    opset_version: dict[str, int]
    schema_version: str
    torch_version: str
    guards_code: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    has_sample_inputs: bool = False
    unknown_fields: dict[str, Any] = field(default_factory=dict)  # fields newer than this reader, kept and shown

    @property
    def node_count(self) -> int:
        return len(self.graph.nodes)

    @property
    def weight_bytes(self) -> int:
        return sum(w.nbytes for w in self.weights) + sum(c.nbytes for c in self.constants)

    def all_graphs(self) -> list[tuple[str, Graph]]:
        return self.graph.walk()


@dataclass
class AotiPackage:
    """What an AOTInductor package holds, read from its file names and metadata JSON (no code is loaded)."""

    models: list[str]
    files: list[str]
    devices: list[str]
    metadata: dict[str, dict[str, str]]


@dataclass
class Archive:
    """A whole `.pt2` (or a `.pte`): its programs and what its zip holds besides."""

    path: str
    root: str
    entries: list[str]
    programs: list[Program]
    archive_format: str
    archive_version: str
    byteorder: str
    aoti: AotiPackage | None = None
    warnings: list[str] = field(default_factory=list)
    executorch: ExecutorchProgram | None = None  # an ExecuTorch .pte: each method is one of `programs`

    @property
    def torch_version(self) -> str:
        return self.programs[0].torch_version if self.programs else ""

    @property
    def schema_version(self) -> str:
        return self.programs[0].schema_version if self.programs else ""

    def program(self, name: str | None = None) -> Program:
        if name is None:
            return self.programs[0]
        for p in self.programs:
            if p.name == name:
                return p
        raise KeyError(name)
