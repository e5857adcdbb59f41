"""A program's JSON (`models/NAME.json`) parsed as the reader needs it: what `json.loads` gives, except that the top
graph's tensors with equal metadata share one dict, each distinct metadata parsed once; and the same for a weights' or
constants' config (`parse_payload_config`).

Why: a quarter of a program's JSON is the metadata of its tensors (10,410 of them at 10k nodes), and nearly all of it
repeats (30 distinct at 10k nodes). Parsed whole, it is 10k dicts built and then found equal again by the reader
(`_ProgramReader._shared_meta`: one MessagePack encoding each) so that equal ones share one dict. Here the metadata
is first left as raw JSON text (`msgspec.Raw`), equal texts are found by their bytes and each distinct one is parsed
once: `read_archive` 207-249 -> 164 ms of CPU at 10k nodes, and no 10k dicts made only to be dropped.

The top graph's nodes are left as raw JSON text too, one per node, and `node_dict` decodes each as the reader takes
it: the reader's garbage is then one node's dicts at a time, not a whole program's (~300k dicts and lists at 10k
nodes, alive together while the model was built, each walked again by every collection the reading set off: a cold
read's collections 78 -> 40 ms of CPU at 10k nodes).

Only a document of exactly the shape torch writes (the fields of torch's `ExportedProgram`, `GraphModule` and `Graph`
in torch/_export/serde/schema.py, the tensor values an object) is read so; anything else (an older or newer schema, a
field this viewer does not know, a damaged file) is parsed as before, whole, and the reader says what it finds. Either
way the reader gets the same program. Without msgspec (a worker's Python), `json.loads` reads it all.
"""
from __future__ import annotations

from functools import cache
from typing import Any

from pt2_viewer.core.pt2.archive import parse_json


def parse_program(data: bytes) -> Any:
    """The program document in `data`, as `parse_json` gives it but with equal tensor metadata of the top graph
    shared (see the module); ValueError or RecursionError for what is not JSON, as `parse_json`."""
    try:
        import msgspec
    except ImportError:  # a worker's Python: the whole document as json.loads gives it
        return parse_json(data)
    try:
        doc = _plain(_decoder().decode(data), msgspec.Struct, msgspec.UNSET)
    except (msgspec.DecodeError, RecursionError):  # another shape, or not JSON: as before (which words the error)
        return parse_json(data)
    graph = doc.get("graph_module", {}).get("graph", {})
    if "tensor_values" in graph:
        graph["tensor_values"] = _shared_metas(graph["tensor_values"])
    return doc


def parse_payload_config(data: bytes) -> Any:
    """A weights' or constants' config (`data/weights/MODEL_weights_config.json`, torch's `PayloadConfig`), as
    `parse_json` gives it but with equal tensor metadata shared, as `parse_program` does for the graph's tensors
    (2,162 weights, 27 distinct metadata, at 10k nodes)."""
    try:
        import msgspec
    except ImportError:
        return parse_json(data)
    try:
        doc = _payload_decoder().decode(data)
    except (msgspec.DecodeError, RecursionError):
        return parse_json(data)
    texts = {name: meta for name, entry in doc.config.items()
             if (meta := entry.tensor_meta) is not msgspec.UNSET}
    metas = _shared_metas(texts)
    return {"config": {name: _plain(entry, msgspec.Struct, msgspec.UNSET)
                       | ({"tensor_meta": metas[name]} if name in metas else {})
                       for name, entry in doc.config.items()}}


def node_dict(raw: Any) -> Any:
    """A node of the top graph as `json.loads` gives it: decoded here from the raw text `parse_program` left, or
    as it is where the document was parsed whole."""
    if type(raw) is dict:
        return raw
    import msgspec

    return msgspec.json.decode(raw)


def _shared_metas(raw: dict[str, Any]) -> dict[str, Any]:
    """Raw tensor metadata parsed, equal texts sharing one dict (the reader never modifies them)."""
    parsed: dict[bytes, Any] = {}
    out: dict[str, Any] = {}
    for name, text in raw.items():
        key = bytes(text)
        meta = parsed.get(key)
        if meta is None:
            meta = parsed[key] = parse_json(key)
        out[name] = meta
    return out


def _plain(struct: Any, struct_type: type, unset: object) -> dict[str, Any]:
    """A struct below as the dict `json.loads` gives: the fields the document has, in the schema's order."""
    out = {}
    for name in struct.__struct_fields__:
        value = getattr(struct, name)
        if value is unset:
            continue
        out[name] = _plain(value, struct_type, unset) if isinstance(value, struct_type) else value
    return out


@cache
def _decoder() -> Any:
    """A decoder for exactly the document torch writes: torch's `ExportedProgram`, `GraphModule` and `Graph`
    (torch/_export/serde/schema.py), every field but the tensor values as `json.loads` gives it, a field missing in
    the file left out (UNSET) and any field more refused (then the document is parsed as before)."""
    import msgspec
    from msgspec import UNSET, Raw, UnsetType

    def struct(name: str, fields: list[tuple[str, Any]]) -> Any:
        return msgspec.defstruct(name, [(f, t, UNSET) for f, t in fields], forbid_unknown_fields=True)

    graph = struct("Graph", [("inputs", Any), ("outputs", Any), ("nodes", list[Raw] | UnsetType),
                             ("tensor_values", dict[str, Raw] | UnsetType), ("sym_int_values", Any),
                             ("sym_bool_values", Any), ("is_single_tensor_return", Any), ("custom_obj_values", Any),
                             ("sym_float_values", Any)])
    graph_module = struct("GraphModule", [("graph", graph | UnsetType), ("signature", Any), ("module_call_graph", Any),
                                          ("metadata", Any), ("treespec_namedtuple_fields", Any)])
    program = struct("ExportedProgram", [("graph_module", graph_module | UnsetType), ("opset_version", Any),
                                         ("range_constraints", Any), ("schema_version", Any), ("verifiers", Any),
                                         ("torch_version", Any), ("guards_code", Any)])
    return msgspec.json.Decoder(program)


@cache
def _payload_decoder() -> Any:
    """torch's `PayloadConfig` and `PayloadMeta`: exactly those fields, the tensor metadata left raw."""
    import msgspec
    from msgspec import UNSET, Raw, UnsetType

    entry = msgspec.defstruct("PayloadMeta", [("path_name", Any, UNSET), ("is_param", Any, UNSET),
                                              ("use_pickle", Any, UNSET), ("tensor_meta", Raw | UnsetType, UNSET)],
                              forbid_unknown_fields=True)
    config = msgspec.defstruct("PayloadConfig", [("config", dict[str, entry])],  # type: ignore[valid-type]
                               forbid_unknown_fields=True)
    return msgspec.json.Decoder(config)


__all__ = ["node_dict", "parse_payload_config", "parse_program"]
