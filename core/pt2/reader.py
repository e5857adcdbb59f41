"""Build the program model (`core/model/program.py`) from a `.pt2` archive's JSON, without torch and without unpickling.

One reader for one format, as Netron does (the format registry, core/formats/registry.py, hands it what it recognises
as a `.pt2` archive or an AOTInductor package, and what no format knows): `read_archive(path)` lists the zip, reads
each `models/NAME.json` (torch's serialized `ExportedProgram`, see `torch/_export/serde/schema.py`) and the
weights/constants manifests, and returns an `Archive`. Every problem becomes an `ArchiveError` with a message for the
user. Fields this reader does not know (a newer schema) are kept in `Program.unknown_fields` and in
`Archive.warnings`, never fatal.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from pt2_viewer.core.model.program import (
    MAX_TARGET_CHARS,
    AotiPackage,
    Archive,
    Argument,
    Edge,
    Graph,
    InputKind,
    InputSpec,
    ModuleCall,
    Node,
    NodeOp,
    OutputKind,
    OutputSpec,
    Program,
    Ref,
    Signature,
    StoredTensor,
    Symbol,
    SymDim,
    Value,
    capped_text,
    collect_refs,
)
from pt2_viewer.core.model.tensor_meta import (
    LAYOUTS,
    SCALAR_TYPES,
)
from pt2_viewer.core.model.tensor_meta import (
    device_text as _device,
)
from pt2_viewer.core.model.tensor_meta import (
    json_list as _list,
)
from pt2_viewer.core.model.tensor_meta import (
    json_object as _obj,
)
from pt2_viewer.core.model.tensor_meta import (
    json_union as _union,
)
from pt2_viewer.core.model.tensor_meta import (
    sym_value as _sym,
)
from pt2_viewer.core.pt2 import archive as zipfiles
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.program_json import node_dict, parse_payload_config, parse_program

MEMORY_FORMATS = {0: "unknown", 1: "contiguous_format", 2: "channels_last", 3: "channels_last_3d",
                  4: "preserve_format"}
_STR_ONLY = frozenset({str})
_LITERAL_KINDS = frozenset({"as_int", "as_float", "as_string", "as_bool", "as_ints", "as_floats", "as_strings",
                            "as_bools", "as_int_lists", "as_float_lists", "as_operator"})
KNOWN_PROGRAM_FIELDS = {"graph_module", "opset_version", "range_constraints", "schema_version", "verifiers",
                        "torch_version", "guards_code"}


class Unknown:
    """An argument or spec of a kind this reader does not know (a newer schema): shown as-is."""

    def __init__(self, kind: str, raw: Any) -> None:
        self.kind, self.raw = kind, raw

    def __repr__(self) -> str:
        return f"<{self.kind}>"


def read_archive(path: str | os.PathLike[str]) -> Archive:
    """Read every program in a `.pt2` (an ExecuTorch `.pte` is another format's: `core.formats.registry.read` reads
    either). Raises `ArchiveError` with a user-facing message on any problem, naming what the file is when it is no
    zip at all."""
    files = zipfiles.open_archive(path)
    try:
        return _read(files)
    finally:
        files.close()


def read_archive_files(files: zipfiles.ArchiveFiles) -> Archive:
    """`read_archive` of a `.pt2` already opened (the parsed-program cache opens it to check its key first)."""
    return _read(files)


def _read(files: zipfiles.ArchiveFiles) -> Archive:
    name = files.path.name
    fmt = files.read_text("archive_format") if files.has("archive_format") else ""
    if fmt and fmt != "pt2":
        raise ArchiveError(f"'{name}' says it is a '{fmt[:40]}' archive, not a torch.export (.pt2) archive.")
    model_files = [n for n in files.names_under(zipfiles.MODELS_DIR) if n.endswith(".json") and n.count("/") == 1]
    aoti = _read_aoti(files)
    if not model_files and aoti is None:
        if not fmt:
            raise ArchiveError(
                f"'{name}' is a zip file but not a torch.export archive: it has no 'archive_format' entry and no "
                "'models/*.json' program. Open a file written by torch.export.save."
            )
        raise ArchiveError(
            f"'{name}' is a .pt2 archive with no program in it (no 'models/*.json' entry) and no AOTInductor "
            "package. It may have been written by a tool that stores only weights."
        )
    result = Archive(
        path=str(files.path),
        root=files.root,
        entries=sorted(files.entries),
        programs=[],
        archive_format=fmt,
        archive_version=files.read_text("archive_version") if files.has("archive_version") else "",
        byteorder=files.read_text("byteorder") if files.has("byteorder") else "",
        aoti=aoti,
    )
    for member in model_files:
        model = member[len(zipfiles.MODELS_DIR):-len(".json")]
        doc = files.read_json(member, parse=parse_program)
        try:
            program = _ProgramReader(model, doc, files, result.warnings).read()
        except (KeyError, TypeError, AttributeError, ValueError, IndexError, RecursionError) as e:
            raise ArchiveError(
                f"The program '{model}' in '{name}' does not have the shape of a torch.export program "
                f"({type(e).__name__}: {e}). The archive is damaged or was written by an incompatible tool.",
                path=str(files.path),
                member=member,
            ) from None
        result.programs.append(program)
    return result


def _read_aoti(files: zipfiles.ArchiveFiles) -> AotiPackage | None:
    names = files.names_under(zipfiles.AOTI_DIR)
    if not names:
        return None
    models = sorted({n[len(zipfiles.AOTI_DIR):].split("/", 1)[0] for n in names if "/" in n[len(zipfiles.AOTI_DIR):]})
    metadata: dict[str, dict[str, str]] = {}
    devices: set[str] = set()
    for n in names:
        if n.endswith("_metadata.json"):
            try:
                meta = files.read_json(n, zipfiles.MAX_SMALL_BYTES)
            except ArchiveError:
                continue
            if isinstance(meta, dict):
                metadata[n] = {str(k): str(v) for k, v in meta.items()}
                if "AOTI_DEVICE_KEY" in meta:
                    devices.add(str(meta["AOTI_DEVICE_KEY"]))
    return AotiPackage(models=models, files=names, devices=sorted(devices), metadata=metadata)


def _name_of(arg: Any) -> str | None:
    """The value name an Argument union (an input, an output, a spec's arg) refers to, if any."""
    kind, x = _union(arg, "argument")
    if kind in ("as_tensor", "as_custom_obj", "as_token") and isinstance(x, dict):
        return str(x["name"])
    if kind in ("as_sym_int", "as_sym_float", "as_sym_bool"):
        k, v = _union(x, kind)
        return str(v) if k == "as_name" else None
    if kind == "as_optional_tensor":
        k, v = _union(x, kind)
        return str(v["name"]) if k == "as_tensor" else None
    return None


class _ProgramReader:
    def __init__(self, model: str, doc: Any, files: zipfiles.ArchiveFiles, warnings: list[str]) -> None:
        self.model = model
        self.doc = _obj(doc, f"models/{model}.json")
        self.files = files
        self.warnings = warnings
        self._metas: dict[bytes, Any] = {}
        self._shared: dict[int, Any] = {}  # id of a metadata dict seen already -> its shared dict
        self._targets: dict[str, str] = {}  # a node's target -> the interned string its nodes share
        self._encode: Callable[[Any], bytes] | None = None
        try:
            from msgspec.msgpack import encode  # the archive's JSON is parsed by msgspec (core/pt2/archive.py)

            self._encode = encode
        except ImportError:  # a worker's Python without msgspec: every tensor keeps its own dict, as before
            pass

    def _shared_meta(self, meta: Any) -> Any:
        """One dict for every tensor of equal metadata (10,412 -> 30 at 10k nodes), found by its MessagePack
        encoding (~0.5 us each; exact: it keeps bools, ints, floats, NaN and -0.0 apart): the copies are freed, and
        `Value.meta` parses each shared dict once (`program._parse_meta`). The dicts are never modified."""
        if self._encode is None:
            return meta
        known = self._shared.get(id(meta))  # the same dict again: the program's JSON shares equal ones already
        if known is not None:
            return known
        try:
            key = self._encode(meta)
        except (TypeError, OverflowError, ValueError):  # e.g. an int past 64 bits: kept as it is
            return meta
        shared = self._shared[id(meta)] = self._metas.setdefault(key, meta)
        return shared

    def read(self) -> Program:
        doc = self.doc
        gm = _obj(doc["graph_module"], "graph_module")
        sig_doc = _obj(gm["signature"], "signature")
        signature = Signature(
            inputs=[self._input_spec(s) for s in _list(sig_doc["input_specs"], "input_specs")],
            outputs=[self._output_spec(s) for s in _list(sig_doc["output_specs"], "output_specs")],
        )
        placeholder_names = [s.name for s in signature.inputs]
        graph = self._graph(gm["graph"], "", placeholder_names)
        ranges = {
            str(k): (_obj(v, "range").get("min_val"), _obj(v, "range").get("max_val"))
            for k, v in _obj(doc.get("range_constraints", {}), "range_constraints").items()
        }
        sv = _obj(doc.get("schema_version", {}), "schema_version")
        unknown = {k: v for k, v in doc.items() if k not in KNOWN_PROGRAM_FIELDS}
        if unknown:
            self.warnings.append(f"Program '{self.model}' has fields this viewer does not know: {sorted(unknown)}")
        verifiers = [str(v) for v in _list(doc.get("verifiers", []), "verifiers")]
        return Program(
            name=self.model,
            graph=graph,
            signature=signature,
            range_constraints=ranges,
            symbols=_symbols(ranges, graph, signature),
            module_call_graph=[self._module_call(e) for e in _list(gm.get("module_call_graph", []), "calls")],
            weights=self._stored(zipfiles.WEIGHTS_CONFIG.format(self.model), "data/weights/"),
            constants=self._stored(zipfiles.CONSTANTS_CONFIG.format(self.model), "data/constants/"),
            dialect=verifiers[0] if verifiers else str(doc.get("dialect", "ATEN")),
            opset_version={str(k): v for k, v in _obj(doc.get("opset_version", {}), "opset_version").items()},
            schema_version=f"{sv.get('major', '?')}.{sv.get('minor', '?')}",
            torch_version=str(doc.get("torch_version", "")),
            guards_code=[str(g) for g in _list(doc.get("guards_code", []), "guards_code")],
            metadata={str(k): str(v) for k, v in _obj(gm.get("metadata", {}), "metadata").items()},
            has_sample_inputs=self.files.has(zipfiles.SAMPLE_INPUTS.format(self.model)),
            unknown_fields=unknown,
        )

    # -- graphs -------------------------------------------------------------------------------------------------
    def _graph(self, g: Any, name: str, placeholder_names: list[str] | None = None) -> Graph:
        g = _obj(g, "graph")
        values: dict[str, Value] = {}
        for k, v in _obj(g.get("tensor_values", {}), "tensor_values").items():
            if type(v) is not dict or "dtype" not in v or type(v.get("sizes")) is not list:
                raise ValueError(f"tensor '{k}' has malformed metadata")
            values[k] = Value(k, "tensor", meta_json=self._shared_meta(v))
        for field_name, kind in (("sym_int_values", "sym_int"), ("sym_float_values", "sym_float"),
                                 ("sym_bool_values", "sym_bool")):
            for k, v in _obj(g.get(field_name, {}), field_name).items():
                s = _sym(v, field_name)
                expr = s if isinstance(s, SymDim) else SymDim(str(s), (), s)
                values[k] = Value(k, kind, expr=expr)
        for k, v in _obj(g.get("custom_obj_values", {}), "custom_obj_values").items():
            values[k] = Value(k, "custom_obj", class_fqn=str(_obj(v, "custom object").get("class_fqn", "")))

        nodes: list[Node] = []
        input_args = _list(g["inputs"], "graph inputs")
        inputs: list[str | None] = []
        for i, a in enumerate(input_args):
            vname = _name_of(a)
            pname = placeholder_names[i] if placeholder_names and i < len(placeholder_names) else vname
            if pname is None:
                pname = f"arg{i}"
            inputs.append(vname or pname)
            nodes.append(Node(pname, NodeOp.PLACEHOLDER, pname, outputs=(vname or pname,)))
            values.setdefault(vname or pname, Value(vname or pname, "constant"))

        refs: list[list[str] | None] = [None] * len(nodes)  # each node's input refs, as `Node.input_refs` gives
        for raw in _list(g["nodes"], "nodes"):
            node, node_refs = self._node(node_dict(raw))
            for sg in node.subgraphs:
                nodes.append(Node(sg.name, NodeOp.GET_ATTR, sg.name, outputs=(sg.name,)))
                values.setdefault(sg.name, Value(sg.name, "graph"))
                refs.append(None)
            nodes.append(node)
            refs.append(node_refs)

        outputs = [_name_of(a) for a in _list(g["outputs"], "graph outputs")]
        nodes.append(Node("output", NodeOp.OUTPUT, "output",
                          inputs=(Argument("", [Ref(o) if o else None for o in outputs]),)))
        refs.append([o for o in outputs if o])
        _link(nodes, values)
        return Graph(name=name, nodes=nodes, edges=_edges(nodes, values, refs), values=values, inputs=inputs,
                     outputs=outputs)

    def _node(self, raw: Any) -> tuple[Node, list[str]]:
        """The node, and the value names its inputs refer to (what `Node.input_refs` answers), collected here so that
        `_edges` need not walk every argument again."""
        if type(raw) is not dict:
            _obj(raw, "node")
        target = raw["target"]
        shown = self._targets.get(target) if type(target) is str else None
        if shown is None:
            if not isinstance(target, str):
                raise ValueError(f"a node's target should be a string, found {type(target).__name__}")
            shown = capped_text(target, MAX_TARGET_CHARS)
            if shown is target:  # one string per operator, not per node
                shown = self._targets[target] = sys.intern(target)
        full_target = None if shown is target or len(target) <= MAX_TARGET_CHARS else target
        subgraphs: list[Graph] = []
        args = []
        refs: list[str] = []
        # Checks spelled out (type(...) is ...) rather than through _obj/_list, and a tensor argument (most of them)
        # read here rather than in `_arg`: this loop runs ~25,000 times at 10k nodes, and the f-strings naming what
        # is wrong are built only when something is.
        inputs = raw.get("inputs", [])
        if type(inputs) is not list:
            _list(inputs, f"inputs of {shown}")
        for na in inputs:
            if type(na) is not dict:
                _obj(na, "named argument")
            arg_name = na.get("name", "")
            a = na["arg"]
            x = a.get("as_tensor") if type(a) is dict and len(a) == 1 else None
            if type(x) is dict:
                ref = x["name"]
                ref = ref if type(ref) is str else str(ref)
                value: Any = Ref(ref)
                refs.append(ref)
            else:
                value = self._arg(a, subgraphs)
                if isinstance(value, Ref):
                    refs.append(value.value)
                elif isinstance(value, (list, tuple, dict)):
                    collect_refs(value, refs)
            args.append(Argument(arg_name if type(arg_name) is str else str(arg_name), value,
                                 "keyword" if na.get("kind") == 2 else "positional"))
        outputs: list[str | None] = []
        raw_outputs = raw.get("outputs", [])
        if type(raw_outputs) is not list:
            _list(raw_outputs, f"outputs of {shown}")
        for o in raw_outputs:
            x = o.get("as_tensor") if type(o) is dict and len(o) == 1 else None
            if type(x) is dict:  # the commonest kind: what `_output_names` answers for it
                out = x["name"]
                outputs.append(out if type(out) is str else str(out))
            else:
                outputs.extend(_output_names(o))
        metadata = raw.get("metadata") or {}
        if type(metadata) is not dict or not _STR_ONLY.issuperset(map(type, metadata.values())):
            raise ValueError(f"the metadata of a '{shown}' node should map names to strings")
        name = raw.get("name") or next((o for o in outputs if o), None) or shown.rsplit(".", 2)[-2]
        if type(name) is not str or len(name) > MAX_TARGET_CHARS:
            name = capped_text(str(name), MAX_TARGET_CHARS)
        return Node(name, NodeOp.CALL_FUNCTION, shown, tuple(args), tuple(outputs), metadata,
                    tuple(subgraphs) if subgraphs else (), full_target=full_target), refs

    def _arg(self, a: Any, subgraphs: list[Graph]) -> Any:
        kind, x = _union(a, "argument")
        if kind == "as_tensor":  # the commonest kind first
            return Ref(str(x["name"]))
        if kind in _LITERAL_KINDS:
            return x
        if kind == "as_none":
            return None
        if kind == "as_tensors":
            return [Ref(str(t["name"])) for t in _list(x, kind)]
        if kind == "as_nested_tensors":
            return [[Ref(str(t["name"])) for t in _list(inner, kind)] for inner in _list(x, kind)]
        if kind in ("as_sym_int", "as_sym_float", "as_sym_bool"):
            k, v = _union(x, kind)
            return Ref(str(v)) if k == "as_name" else v
        if kind in ("as_sym_ints", "as_sym_floats", "as_sym_bools"):
            out = []
            for item in _list(x, kind):
                k, v = _union(item, kind)
                out.append(Ref(str(v)) if k == "as_name" else v)
            return out
        if kind == "as_optional_tensor":
            k, v = _union(x, kind)
            return Ref(str(v["name"])) if k == "as_tensor" else None
        if kind == "as_optional_tensors":
            return [self._arg({"as_optional_tensor": t}, subgraphs) for t in _list(x, kind)]
        if kind == "as_scalar_type":
            return f"torch.{SCALAR_TYPES.get(x, x)}"
        if kind == "as_memory_format":
            return f"torch.{MEMORY_FORMATS.get(x, x)}"
        if kind == "as_layout":
            return f"torch.{LAYOUTS.get(x, x)}"
        if kind == "as_device":
            return f"device('{_device(x)}')"
        if kind == "as_complex":
            return complex(x["real"], x["imag"])
        if kind == "as_custom_obj":
            return Ref(str(x["name"]))
        if kind == "as_graph":
            x = _obj(x, kind)
            sg = self._graph(x["graph"], str(x["name"]))
            subgraphs.append(sg)
            return sg
        if kind == "as_string_to_argument":
            return {str(k): self._arg(v, subgraphs) for k, v in _obj(x, kind).items()}
        self.warnings.append(f"Argument kind '{kind}' is unknown to this viewer; shown as-is.")
        return Unknown(kind, x)

    # -- signature ----------------------------------------------------------------------------------------------
    def _input_spec(self, s: Any) -> InputSpec:
        kind, x = _union(s, "input spec")
        x = _obj(x, kind)
        if kind == "user_input":
            arg = x["arg"]
            return InputSpec(_name_of(arg) or "", InputKind.USER_INPUT, None)
        if kind == "parameter":
            return InputSpec(x["arg"]["name"], InputKind.PARAMETER, x["parameter_name"])
        if kind == "buffer":
            return InputSpec(x["arg"]["name"], InputKind.BUFFER, x["buffer_name"], bool(x.get("persistent")))
        if kind == "tensor_constant":
            return InputSpec(x["arg"]["name"], InputKind.CONSTANT_TENSOR, x["tensor_constant_name"])
        if kind == "custom_obj":
            return InputSpec(x["arg"]["name"], InputKind.CUSTOM_OBJ, x["custom_obj_name"])
        if kind == "token":
            return InputSpec(x["arg"]["name"], InputKind.TOKEN, None)
        if kind == "constant_input":
            value = _union(x["value"], "constant")[1] if x.get("value") else None
            return InputSpec(x["name"], InputKind.USER_INPUT, None, constant=value)
        raise ValueError(f"unknown input spec kind '{kind}'")

    def _output_spec(self, s: Any) -> OutputSpec:
        kind, x = _union(s, "output spec")
        x = _obj(x, kind)
        try:
            out_kind = OutputKind(kind.upper())
        except ValueError:
            raise ValueError(f"unknown output spec kind '{kind}'") from None
        target = next((x[k] for k in ("buffer_name", "parameter_name", "user_input_name") if k in x), None)
        # A user output's arg is an Argument union (a tensor, a symint, a constant); every other kind holds a
        # plain TensorArgument/TokenArgument `{"name": ...}`.
        name = _name_of(x["arg"]) if kind == "user_output" else _obj(x["arg"], kind)["name"]
        return OutputSpec(str(name or ""), out_kind, target)

    def _module_call(self, e: Any) -> ModuleCall:
        e = _obj(e, "module call")
        sig = e.get("signature") or {}
        return ModuleCall(
            fqn=str(e.get("fqn", "")),
            forward_arg_names=sig.get("forward_arg_names"),
            inputs=[n for n in (_name_of(a) for a in sig.get("inputs", [])) if n],
            outputs=[n for n in (_name_of(a) for a in sig.get("outputs", [])) if n],
        )

    def _stored(self, config_name: str, folder: str) -> list[StoredTensor]:
        if not self.files.has(config_name):
            return []
        doc = _obj(self.files.read_json(config_name, parse=parse_payload_config), config_name)
        out = []
        for name, entry in _obj(doc.get("config", {}), "config").items():
            entry = _obj(entry, name)
            path = str(entry.get("path_name", ""))
            zentry = self.files.entries.get(folder + path)
            meta = entry.get("tensor_meta")
            if meta is not None and (type(meta) is not dict or "dtype" not in meta):
                raise ValueError(f"weight '{name}' has malformed metadata")
            out.append(StoredTensor(str(name), path, None if meta is None else self._shared_meta(meta),
                                    bool(entry.get("is_param")),
                                    bool(entry.get("use_pickle")), zentry.size if zentry else 0))
        return out


def _output_names(o: Any) -> list[str | None]:
    kind, x = _union(o, "output")
    if kind == "as_tensor":  # the commonest kind first; what `_name_of` answers for it
        return [str(x["name"]) if isinstance(x, dict) else None]
    if kind == "as_none":
        return [None]
    if kind == "as_tensors":
        return [str(t["name"]) for t in _list(x, kind)]
    if kind == "as_optional_tensors":
        return [_name_of({"as_optional_tensor": t}) for t in _list(x, kind)]
    if kind in ("as_sym_ints", "as_sym_bools", "as_sym_floats"):
        return [str(v) if k == "as_name" else None for k, v in (_union(i, kind) for i in _list(x, kind))]
    return [_name_of(o)]


def _link(nodes: list[Node], values: dict[str, Value]) -> None:
    for node in nodes:
        for out in node.outputs:
            if out is None:
                continue
            v = values.get(out)
            if v is None:
                v = values[out] = Value(out, "unknown")
            v.producer = node.name


def _edges(nodes: list[Node], values: dict[str, Value], refs: list[list[str] | None]) -> list[Edge]:
    """Each node's data edges, in order, each (producer, value) once per consumer: `refs[i]` holds what node i's
    inputs refer to (None: none; a get_attr for a subgraph)."""
    edges: list[Edge] = []
    for node, node_refs in zip(nodes, refs):
        dst = node.name
        for sg in node.subgraphs:
            edges.append(Edge(sg.name, dst, sg.name))
        if not node_refs:
            continue
        # a value read twice is one edge (its producer follows from it): deduplicated in order, at C speed
        for ref in dict.fromkeys(node_refs) if len(node_refs) > 1 else node_refs:
            v = values.get(ref)
            if v is not None and v.producer is not None:
                edges.append(Edge(v.producer, dst, ref))
    return edges


def _symbols(ranges: dict[str, tuple[int | None, int | None]], graph: Graph, sig: Signature) -> list[Symbol]:
    """Each symbol with its range, and the user-input dims it stands for (from the placeholders' shapes)."""
    symbols = {k: Symbol(k, lo, hi) for k, (lo, hi) in ranges.items()}
    user_inputs = {s.name for s in sig.inputs if s.kind is InputKind.USER_INPUT}
    for name in graph.inputs:
        if name not in user_inputs:
            continue  # parameters and buffers have static shapes; parsing thousands of them would cost time
        v = graph.values.get(name or "")
        if v is None or v.meta is None:
            continue
        for i, d in enumerate(v.meta.sizes):
            if isinstance(d, SymDim) and len(d.symbols) == 1 and d.text == d.symbols[0]:
                sym = symbols.setdefault(d.text, Symbol(d.text, None, None))
                sym.sources.append(f"{name}.shape[{i}]")
                if sym.hint is None and isinstance(d.hint, int):
                    sym.hint = d.hint
    return sorted(symbols.values(), key=lambda s: (s.unbacked, len(s.name), s.name))
