"""An ONNX model's graph as the viewer's `Program`, so the graph view, Details, Find, Summary, `render` and the report
work on a `.onnx` unchanged (as core/pte/program_map.py does for a `.pte`):

- an ONNX node is a `call_function` node whose target is its domain and op type (`onnx.Conv`, `com_microsoft.Gelu`),
  the domain's opset in its metadata; its inputs are arguments named by the op's schema (`X`, `W`, `B`), its
  attributes keyword arguments;
- the graph's inputs are placeholders (user inputs); each initializer is a placeholder of kind parameter (constant
  for integer ones), so the graph draws it as a weight row of the op that reads it, as a `.pt2`'s parameters; its
  bytes are never read (an external one is never opened). A small integer initializer (a Reshape's shape, axes)
  or a scalar is the literal it holds in the arguments of the ops that read it, as a `.pt2` writes `view(x, [2, 5,
  4, 8])`: the exporter keeps each such constant once for all its readers, and drawn as a node it would tie every
  layer of a transformer to one box;
- a value's dtype and shape come from the file's inputs, outputs and `value_info` (nothing is inferred), a symbolic
  dim by its name (`batch`), a dim the file leaves unknown as `?`;
- an attribute holding a graph (If's branches, Loop's and Scan's bodies) and a call of a model-local function are
  subgraphs, reached as a `cond`'s are: a `get_attr` node per subgraph and the graph as the argument; the values a
  subgraph reads from its outer scope are its placeholders;
- nodes are grouped by module (core/onnx/provenance.py): by torch's `name_scopes` metadata, else by the scopes in
  their names. Node and value names are made identifiers (the file's own name kept in the node's metadata).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.model.program import (
    MAX_TARGET_CHARS,
    Argument,
    Edge,
    Graph,
    InputKind,
    InputSpec,
    Node,
    NodeOp,
    OutputKind,
    OutputSpec,
    Program,
    Ref,
    Signature,
    StoredTensor,
    Symbol,
    Value,
    capped_text,
)
from pt2_viewer.core.model.tensor_meta import SCALAR_TYPES, SymDim, TensorMeta
from pt2_viewer.core.onnx import provenance
from pt2_viewer.core.onnx.dtypes import Dim, dtype_name, tensor_nbytes, type_of

DEFAULT_DOMAIN = "ai.onnx"
_SERDE_CODE = {name: code for code, name in SCALAR_TYPES.items()}
_NOT_NAME = re.compile(r"[^0-9A-Za-z_.]+")
_MAX_LITERAL_ITEMS = 16  # a tensor attribute shows its values up to this many elements
_MAX_TEXT = 2000  # what a node keeps of a metadata value or string attribute a hostile file may make huge
_INTEGER_TYPES = {2, 3, 4, 5, 6, 7, 9, 12, 13}  # TensorProto types an index or shape constant has


def identifier(name: str, fallback: str) -> str:
    """`name` as a node or value name the viewer draws and finds: letters, digits, `_` and `.`."""
    out = _NOT_NAME.sub("_", name).strip("_.")
    return out or fallback


class Names:
    """Unique names in one graph: `take(wanted)` gives `wanted` or `wanted_N`."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self.used:
            name = f"{wanted}_{n}"
            n += 1
        self.used.add(name)
        return name


def _meta_json(dtype: str, dims: list[Dim] | None) -> Any:
    """A tensor's metadata in torch's serialized form (what `Value.meta` parses); None when the dtype has no code
    in torch's schema (`_meta_direct` then) or the rank is unknown."""
    code = _SERDE_CODE.get(dtype)
    if code is None or dims is None:
        return None
    return {"dtype": code, "sizes": [_dim_json(d) for d in dims], "strides": [], "device": {"type": "cpu"},
            "requires_grad": False, "layout": 7}


def _dim_json(d: Dim) -> Any:
    if isinstance(d, int):
        return {"as_int": d}
    name = (d or "?").replace("\\", "\\\\").replace("'", "\\'")
    return {"as_expr": {"expr_str": f"Symbol('{name}', integer=True)", "hint": None}}


def _meta_direct(dtype: str, dims: list[Dim]) -> TensorMeta:
    sizes = tuple(d if isinstance(d, int) else SymDim(d or "?", (d or "?",)) for d in dims)
    return TensorMeta(dtype, sizes, (), "cpu", False)


@dataclass
class _Scope:
    """What a graph sees: its own values (ONNX name -> the viewer's name), its small constants (ONNX name -> the
    literal they hold), and its outer graph's."""

    values: dict[str, str]
    outer: _Scope | None
    literals: dict[str, Any]

    def literal(self, onnx_name: str) -> tuple[bool, Any]:
        scope: _Scope | None = self
        while scope is not None:
            if onnx_name in scope.values:
                return False, None
            if onnx_name in scope.literals:
                return True, scope.literals[onnx_name]
            scope = scope.outer
        return False, None

    def find(self, onnx_name: str) -> bool:
        scope: _Scope | None = self.outer
        while scope is not None:
            if onnx_name in scope.values:
                return True
            scope = scope.outer
        return False


class ModelMapper:
    """Builds the `Program` of one `ModelProto` (`program()`); `warnings` says what the file left undefined."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.opsets = {(o.domain or DEFAULT_DOMAIN): o.version for o in model.opset_import}
        self.functions = {(f.domain or DEFAULT_DOMAIN, f.name): f for f in model.functions}
        self.warnings: list[str] = []
        self.weights: list[StoredTensor] = []
        self.specs: list[InputSpec] = []
        self._metas: dict[tuple[str, tuple[Dim, ...] | None], Any] = {}
        self._in_function: list[tuple[str, str]] = []

    # -- the program -------------------------------------------------------------------------------------------
    def program(self) -> Program:
        g = self.model.graph
        graph = self.graph("", g.node, [i.name for i in g.input], [o.name for o in g.output], list(g.initializer),
                           _types(g), outer=None, top=True)
        user_inputs = {s.name for s in self.specs if s.kind is InputKind.USER_INPUT}
        symbols: dict[str, Symbol] = {}
        for name in graph.inputs:
            meta = graph.values[name].meta if name in user_inputs and name in graph.values else None
            for i, d in enumerate(meta.sizes if meta is not None else ()):
                if isinstance(d, SymDim) and d.text != "?":
                    # a dim is never negative, and ONNX says no more of it: [0, ∞], as a .pt2's unbounded size
                    symbols.setdefault(d.text, Symbol(d.text, 0, None)).sources.append(f"{name}.shape[{i}]")
        producer = " ".join(x for x in (self.model.producer_name, self.model.producer_version) if x)
        metadata = {"format": "ONNX", "producer": producer or "(not named)", "IR version": str(self.model.ir_version),
                    "opset": ", ".join(f"{d} {v}" for d, v in self.opsets.items())}
        metadata.update({f"metadata {p.key}": capped_text(p.value, _MAX_TEXT) for p in self.model.metadata_props})
        if self.model.doc_string:
            metadata["doc"] = capped_text(self.model.doc_string, _MAX_TEXT)
        signature = Signature(self.specs, [OutputSpec(o, OutputKind.USER_OUTPUT, None) for o in graph.outputs if o])
        return Program(
            name=identifier(g.name, "model"), graph=graph, signature=signature,
            range_constraints={s: (None, None) for s in symbols}, symbols=list(symbols.values()),
            module_call_graph=[], weights=self.weights, constants=[], dialect="ONNX", opset_version=self.opsets,
            schema_version=f"IR {self.model.ir_version}",
            torch_version=self.model.producer_version if self.model.producer_name == "pytorch" else "",
            metadata=metadata)

    # -- one graph ---------------------------------------------------------------------------------------------
    def graph(self, name: str, onnx_nodes: Iterable[Any], input_names: list[str], output_names: list[str],
              initializers: list[Any], types: dict[str, Any], outer: _Scope | None, top: bool = False) -> Graph:
        onnx_nodes = list(onnx_nodes)
        readers: dict[str, int] = {}
        for n in onnx_nodes:
            for x in dict.fromkeys(n.input):
                readers[x] = readers.get(x, 0) + 1
        returned = set(output_names)  # a constant the graph returns stays a value of its own
        scope = _Scope({}, outer, {t.name: _tensor_literal(t) for t in initializers
                                   if _is_small_constant(t, readers.get(t.name, 0)) and t.name not in returned})
        names = Names()
        value_names = Names()
        nodes: list[Node] = []
        values: dict[str, Value] = {}
        inputs: list[str | None] = []
        initialized = {t.name for t in initializers}
        initializers = [t for t in initializers if t.name not in scope.literals]

        def placeholder(onnx_name: str, value: Value, metadata: dict[str, str] | None = None) -> str:
            vname = value.name
            node_name = names.take(vname)
            value.producer = node_name
            values[vname] = value
            scope.values[onnx_name] = vname
            nodes.append(Node(node_name, NodeOp.PLACEHOLDER, node_name, outputs=[vname], metadata=metadata or {}))
            return vname

        for onnx_name in input_names:
            if onnx_name in initialized:
                continue  # IR < 4 lists initializers as inputs too: they are weights, not the caller's
            vname = placeholder(onnx_name, self._value(value_names.take(identifier(onnx_name, "input")),
                                                       types.get(onnx_name)))
            inputs.append(vname)
            if top:
                self.specs.append(InputSpec(vname, InputKind.USER_INPUT, None))
        # The TorchScript exporter reads a weight shared by several ops (equal BatchNorm-folded biases) through one
        # Identity node per reader: each such copy is a weight of its own, a row of the op that reads it
        stored = {t.name: t for t in initializers}
        copies = {id(n): stored[n.input[0]] for n in onnx_nodes if n.op_type == "Identity" and not n.domain
                  and len(n.input) == 1 and len(n.output) == 1 and n.output[0] and n.input[0] in stored}
        copied: dict[str, int] = {}
        for c in copies.values():
            copied[c.name] = copied.get(c.name, 0) + 1

        def weight(onnx_name: str, t: Any, metadata: dict[str, str]) -> None:
            vname = placeholder(onnx_name, self._initializer_value(value_names.take(identifier(onnx_name, "weight")),
                                                                   t), metadata)
            inputs.append(vname)
            kind = InputKind.CONSTANT_TENSOR if t.data_type in _INTEGER_TYPES or not t.dims else InputKind.PARAMETER
            if top:
                self.specs.append(InputSpec(vname, kind, t.name))

        for t in initializers:
            self.weights.append(StoredTensor(t.name, self._location(t), self._initializer_value("", t).meta_json,
                                             t.data_type not in _INTEGER_TYPES and bool(t.dims), False,
                                             self._nbytes(t)))
            if copied.get(t.name, 0) < readers.get(t.name, 0) or t.name in returned or not readers.get(t.name):
                weight(t.name, t, self._initializer_metadata(t))  # read (or returned) as itself, or by nothing
        for n in onnx_nodes:
            if id(n) in copies:
                t = copies[id(n)]
                weight(n.output[0], t, {**self._initializer_metadata(t), "copy of": t.name[:200],
                                        "ONNX node": capped_text(n.name, _MAX_TEXT) or "(no name)"})

        def argument(onnx_name: str) -> Any:
            inlined, value = scope.literal(onnx_name)
            return value if inlined else ref(onnx_name)

        def ref(onnx_name: str) -> Ref | None:
            if not onnx_name:
                return None  # an optional input left out
            vname = scope.values.get(onnx_name)
            if vname is None and scope.find(onnx_name):  # read from the outer graph: a placeholder of this one
                vname = placeholder(onnx_name, self._value(value_names.take(identifier(onnx_name, "outer")),
                                                           types.get(onnx_name)), {"from": "the outer graph"})
                inputs.append(vname)
            if vname is None:
                self.warnings.append(f"The node input '{capped_text(onnx_name, 200)}' is not produced by any node, "
                                     "input or initializer of its graph.")
                vname = value_names.take(identifier(onnx_name, "undefined"))
                values[vname] = self._value(vname, None)
                scope.values[onnx_name] = vname
            return Ref(vname)

        for n in onnx_nodes:
            if id(n) in copies:
                continue
            domain = n.domain or DEFAULT_DOMAIN
            node_name = names.take(identifier(n.name.rsplit("/", 1)[-1], n.op_type or "node"))
            schema_names = _schema_inputs(n.op_type, domain, self.opsets.get(domain))
            args = [Argument(_arg_name(schema_names, i), argument(x)) for i, x in enumerate(n.input)]
            subgraphs: list[Graph] = []
            for attr in n.attribute:
                for k, g in enumerate(_attribute_graphs(attr)):
                    own = f"{node_name}_{attr.name}" + (f"_{k}" if attr.graphs else "")
                    sub_name = names.take(identifier(g.name, own) if g.name and g.name not in names.used else own)
                    sub = self.graph(sub_name, g.node, [i.name for i in g.input], [o.name for o in g.output],
                                     list(g.initializer), {**types, **_types(g)}, outer=scope)
                    subgraphs.append(sub)
                    args.append(Argument(attr.name, sub, "keyword"))
                if not attr.HasField("g") and not attr.graphs:
                    args.append(Argument(attr.name, _attribute_value(attr), "keyword"))
            function = self.functions.get((domain, n.op_type))
            if function is not None and (domain, n.op_type) not in self._in_function:
                self._in_function.append((domain, n.op_type))  # a function that calls itself is drawn once
                sub_name = names.take(f"{node_name}_body")
                sub = self.graph(sub_name, function.node, list(function.input), list(function.output), [],
                                 _types(function), outer=None)
                self._in_function.pop()
                subgraphs.append(sub)
                args.append(Argument("function", sub, "keyword"))
            for sub in subgraphs:
                nodes.append(Node(sub.name, NodeOp.GET_ATTR, sub.name, outputs=[sub.name]))
                values[sub.name] = Value(sub.name, "graph", producer=sub.name)
            outputs: list[str | None] = []
            for out in n.output:
                if not out:
                    outputs.append(None)
                    continue
                vname = value_names.take(identifier(out, "value"))
                values[vname] = self._value(vname, types.get(out))
                values[vname].producer = node_name
                scope.values[out] = vname
                outputs.append(vname)
            target = f"onnx.{n.op_type}" if domain == DEFAULT_DOMAIN else f"{identifier(domain, 'domain')}.{n.op_type}"
            node = Node(node_name, NodeOp.CALL_FUNCTION, capped_text(target, MAX_TARGET_CHARS), args, outputs,
                        self._node_metadata(n, domain), subgraphs)
            if len(target) > MAX_TARGET_CHARS:
                node.full_target = target
            nodes.append(node)

        graph_outputs: list[str | None] = []
        for o in output_names:
            r = ref(o)
            graph_outputs.append(r.value if r is not None else None)
        nodes.append(Node(names.take("output"), NodeOp.OUTPUT, "output",
                          inputs=[Argument("", [Ref(o) if o else None for o in graph_outputs])]))
        return Graph(name, nodes, _edges(nodes, values), values, inputs, graph_outputs)

    # -- values ------------------------------------------------------------------------------------------------
    def _value(self, name: str, type_proto: Any) -> Value:
        if type_proto is None:
            return Value(name, "tensor")
        dtype, dims = type_of(type_proto)
        if type_proto.WhichOneof("value") not in ("tensor_type", "sparse_tensor_type"):
            return Value(name, "custom_obj", class_fqn=dtype)
        return self._tensor_value(name, dtype, dims)

    def _tensor_value(self, name: str, dtype: str, dims: list[Dim] | None) -> Value:
        key = (dtype, tuple(dims) if dims is not None else None)
        if key not in self._metas:  # equal metadata is one dict: `Value.meta` parses it once
            self._metas[key] = _meta_json(dtype, dims)
        v = Value(name, "tensor", meta_json=self._metas[key])
        if self._metas[key] is None and dims is not None:
            v.meta = _meta_direct(dtype, dims)  # a dtype torch's schema has no code for
        return v

    def _initializer_value(self, name: str, t: Any) -> Value:
        return self._tensor_value(name, dtype_name(t.data_type), list(t.dims))

    def _location(self, t: Any) -> str:
        if t.data_location == 1:
            location = next((e.value for e in t.external_data if e.key == "location"), "?")
            return f"external data '{capped_text(location, 200)}'"
        return f"in the model, initializer '{capped_text(t.name, 200)}'"  # one path a tensor (folding's tied test)

    def _nbytes(self, t: Any) -> int:
        if t.data_location == 1:
            length = next((e.value for e in t.external_data if e.key == "length"), "")
            if length.isdigit():
                return int(length)
        return len(t.raw_data) if t.raw_data else tensor_nbytes(list(t.dims), t.data_type)

    def _initializer_metadata(self, t: Any) -> dict[str, str]:
        out = {"initializer": t.name if len(t.name) <= 200 else capped_text(t.name, 200),
               "stored": self._location(t)}
        if t.doc_string:
            out["doc"] = capped_text(t.doc_string, _MAX_TEXT)
        return out

    # -- metadata ----------------------------------------------------------------------------------------------
    def _node_metadata(self, n: Any, domain: str) -> dict[str, str]:
        props = {p.key: p.value for p in n.metadata_props}
        scopes = provenance.exporter_scopes(props)
        if scopes is None:
            scopes = provenance.name_scopes(n.name)
        out: dict[str, str] = {}
        if scopes:
            out["nn_module_stack"] = provenance.module_stack_text(scopes)
        trace = provenance.stack_trace(props)
        if trace:
            out["stack_trace"] = trace
        link = provenance.source_link(props)
        if link is not None and link.node:
            out["FX node"] = link.node
            target = provenance.fx_node_target(props.get(provenance.FX_NODE, ""))
            if target:
                out["FX target"] = target
        if provenance.rules(props):
            out["rewrite rules"] = capped_text(provenance.rules(props), _MAX_TEXT)
        out["ONNX node"] = capped_text(n.name, _MAX_TEXT) if n.name else "(no name)"
        out["domain"] = domain
        if domain in self.opsets:
            out["opset"] = str(self.opsets[domain])
        elif (domain, n.op_type) in self.functions:
            out["opset"] = "a function of this model"
        if n.doc_string:
            out["doc"] = capped_text(n.doc_string, _MAX_TEXT)
        for key, value in props.items():
            if key not in provenance.SHOWN_KEYS:
                out[capped_text(key, 200)] = capped_text(value, _MAX_TEXT)
        return out


def _types(g: Any) -> dict[str, Any]:
    """A graph's (or function's) declared value types: its inputs, outputs and value_info."""
    out: dict[str, Any] = {}
    for v in (*getattr(g, "value_info", ()), *(x for x in g.input if hasattr(x, "type")),
              *(x for x in g.output if hasattr(x, "type"))):
        if v.HasField("type"):
            out[v.name] = v.type
    return out


def _attribute_graphs(attr: Any) -> list[Any]:
    return ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)


def _schema_inputs(op_type: str, domain: str, version: int | None) -> list[str]:
    """The op's input names from ONNX's schema at the model's opset; [] for an op ONNX does not know."""
    from onnx import defs

    try:
        schema = defs.get_schema(op_type, version or defs.onnx_opset_version(),
                                 "" if domain == DEFAULT_DOMAIN else domain)
    except Exception:  # onnx raises its own SchemaError (a C++ binding type) for an unknown op
        return []
    return [i.name for i in schema.inputs]


def _arg_name(schema_names: list[str], i: int) -> str:
    if i < len(schema_names):
        return schema_names[i]
    return f"{schema_names[-1]}[{i - len(schema_names) + 1}]" if schema_names else f"input{i}"


def _attribute_value(attr: Any) -> Any:
    """An attribute as a Python literal: numbers, strings, lists; a tensor by its values when small, else by its
    type and shape; a type proto by its text."""
    which = attr.type
    if which == 1:
        return attr.f
    if which == 2:
        return attr.i
    if which == 3:
        return capped_text(attr.s.decode("utf-8", "replace"), _MAX_TEXT)
    if which == 4:
        return _tensor_literal(attr.t)
    if which == 6:
        return list(attr.floats[:1000])
    if which == 7:
        return list(attr.ints[:1000])
    if which == 8:
        return [capped_text(s.decode("utf-8", "replace"), 200) for s in attr.strings[:100]]
    if which == 9:
        return [_tensor_literal(t) for t in attr.tensors[:100]]
    if which == 13:
        dtype, dims = type_of(attr.tp)
        return f"{dtype}{dims if dims is not None else ''}"
    return f"<attribute type {which}>"


def _is_small_constant(t: Any, readers: int) -> bool:
    """An initializer shown as the literal it holds: a scalar, an integer tensor of a few elements, or a float of
    one element that several ops read (attention's scale; a Linear's one-element bias, read once, stays a weight)."""
    if t.data_location == 1 or t.data_type not in _INTEGER_TYPES | {1, 10, 11, 16}:
        return False
    n = 1
    for d in t.dims:
        n *= d
    return not t.dims or (n <= _MAX_LITERAL_ITEMS if t.data_type in _INTEGER_TYPES else n == 1 and readers > 1)


def _tensor_literal(t: Any) -> Any:
    dims = list(t.dims)
    dtype = dtype_name(t.data_type)
    if t.data_location != 1 and tensor_nbytes(dims, t.data_type) <= 8 * _MAX_LITERAL_ITEMS:
        try:
            from onnx import numpy_helper

            values = numpy_helper.to_array(t)
            if values.size <= _MAX_LITERAL_ITEMS:
                return values.tolist()
        except (ValueError, TypeError, AttributeError):
            pass
    return f"tensor {dtype}{dims}"


def _edges(nodes: list[Node], values: dict[str, Value]) -> list[Edge]:
    edges: list[Edge] = []
    for node in nodes:
        for sg in node.subgraphs:
            edges.append(Edge(sg.name, node.name, sg.name))
        for ref in dict.fromkeys(node.input_refs()):
            v = values.get(ref)
            if v is not None and v.producer is not None:
                edges.append(Edge(v.producer, node.name, ref))
    return edges


def model_program(model: Any) -> tuple[Program, list[str]]:
    """The model's `Program`, and warnings about what it leaves undefined."""
    mapper = ModelMapper(model)
    program = mapper.program()
    return program, list(dict.fromkeys(mapper.warnings))[:20]
