"""A graph as columns, the form the parsed-program cache keeps it in (core/pt2/parsed_cache.py, issue 32 §2).

Why columns: at ~100k nodes, decoding every node into its dataclasses (its `Argument`s, `Ref`s, metadata dict and
`Value`s) took 1.3 s of CPU and most of the model's memory, yet the first view reads only each node's name, op,
target, outputs and module stack (the index, the module tree, the collapsed scene). So an entry keeps per graph:

- names, outputs and value names as MessagePack arrays of strings (msgspec decodes 100k short strings in a few ms);
- op codes as one byte per node; targets interned, one int32 id per node; module stacks interned twice over: each
  distinct stack as a list of scope ids, each distinct scope (key, path, class) once, so a 100k-node program's 16k
  stacks share ~20k `ModuleScope`s and nothing is parsed on reading;
- edges as two int32 arrays (source and consumer node positions) and the value names they carry;
- what the first view never reads (a node's `inputs` and `metadata`) as one small MessagePack record per node,
  its metadata strings interned in the graph's table (stack traces repeat layer after layer), decoded when Details,
  Find, an overlay or the report first reads the node (program.py's `ColumnNode`).

The int columns are the stdlib's `array`, read from the entry's bytes (native byte order: an entry is this machine's
own): numpy would add its import to every first view (tests/app/test_lazy_imports.py keeps it out), and nothing
here needs more than a list of ids. Nodes stay `Node` objects, since every view, the index, the scene, the diff and
the report take them, but thin ones: built with name, op, target, outputs and module stack only (the two deferred
fields equal what the reader builds: tests/core/pt2/test_parsed_cache.py compares whole archives). Values and edges
are built eagerly, in tight loops (the scene and the index read every edge to draw the first view). A block that
cannot be read back whole (a wrong length, an id out of range) raises ValueError, which the cache takes as a miss.
"""
from __future__ import annotations

import struct
from array import array
from collections.abc import Callable
from typing import Any

from pt2_viewer.core.model.metadata import ModuleScope
from pt2_viewer.core.model.program import Argument, ColumnNode, Edge, Graph, Node, NodeOp, Ref, Value
from pt2_viewer.core.model.tensor_meta import SymDim, TensorMeta

EXT_REF, EXT_GRAPH, EXT_COMPLEX = 1, 2, 3
_OPS = tuple(NodeOp)
_OP_CODE = {op: i for i, op in enumerate(_OPS)}
_I32, _I64 = "i", "q"  # array typecodes: 4 and 8 bytes on every platform CPython runs on (checked below)
assert array(_I32).itemsize == 4 and array(_I64).itemsize == 8
_STACK_KEY = "nn_module_stack"


class Mark:
    """What the encoder writes as a MessagePack extension (msgspec would write a dataclass, `Ref` included, as a
    map)."""

    __slots__ = ("code", "payload")

    def __init__(self, code: int, payload: bytes) -> None:
        self.code, self.payload = code, payload


class SubgraphMark:
    """Where an argument held a subgraph: put back as the node's own `Graph` object when its inputs are decoded."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def marked(v: Any) -> Any:
    """An argument's value with its references, subgraphs and complex numbers as extension marks."""
    if isinstance(v, Ref):
        return Mark(EXT_REF, v.value.encode())
    if isinstance(v, list):
        return [marked(x) for x in v]
    if isinstance(v, dict):
        return {k: marked(x) for k, x in v.items()}
    if isinstance(v, Graph):
        return Mark(EXT_GRAPH, v.name.encode())
    if isinstance(v, complex):
        return Mark(EXT_COMPLEX, struct.pack("<dd", v.real, v.imag))
    if v is None or isinstance(v, (str, int, float)):  # bool is an int
        return v
    raise NotImplementedError(f"{type(v).__name__} is not stored in the program cache")


def ext_hook(code: int, payload: memoryview) -> Any:
    if code == EXT_REF:
        return Ref(bytes(payload).decode())
    if code == EXT_GRAPH:
        return SubgraphMark(bytes(payload).decode())
    if code == EXT_COMPLEX:
        real, imag = struct.unpack("<dd", payload)
        return complex(real, imag)
    raise ValueError(f"unknown extension {code}")


def enc_hook(o: Any) -> Any:
    import msgspec

    if isinstance(o, Mark):
        return msgspec.msgpack.Ext(o.code, o.payload)
    raise NotImplementedError(f"{type(o).__name__} is not stored in the program cache")


class _Interned:
    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.items: list[Any] = []

    def __call__(self, item: Any) -> int:
        i = self.ids.get(item)
        if i is None:
            i = self.ids[item] = len(self.items)
            self.items.append(item)
        return i


def encode_graph(g: Graph, meta_id: Callable[[Any], int]) -> dict[str, Any]:
    """`g` (and its nodes' subgraphs, nested) as a block of columns; `meta_id` interns a tensor-metadata dict (-1
    for None) in the entry's table."""
    import msgspec

    encoder = msgspec.msgpack.Encoder(enc_hook=enc_hook)
    nodes = g.nodes
    targets, stacks, strings, scopes = _Interned(), _Interned(), _Interned(), _Interned()
    out_flat: list[str | None] = []
    out_off = [0]
    records = bytearray()
    rec_off = [0]
    for n in nodes:
        out_flat.extend(n.outputs)
        out_off.append(len(out_flat))
        meta = n.metadata
        if any(not isinstance(k, str) or not isinstance(v, str) for k, v in meta.items()):
            raise NotImplementedError("metadata that is not text is not stored in the program cache")
        records += encoder.encode([[[a.name, marked(a.value), a.kind] for a in n.inputs],
                                   [[k, strings(v)] for k, v in meta.items()]])
        rec_off.append(len(records))
    position = {n.name: i for i, n in enumerate(nodes)}
    edges = g.edges
    columnar_edges = len(position) == len(nodes) and all(e.src in position and e.dst in position for e in edges)
    values = list(g.values.values())
    if any(not isinstance(v.kind, str) for v in values):
        raise NotImplementedError("a value kind that is not text is not stored in the program cache")
    kinds = _Interned()
    rare = {i: [v.expr, v.class_fqn] for i, v in enumerate(values) if v.expr is not None or v.class_fqn is not None}
    return {
        "name": g.name, "inputs": g.inputs, "outputs": g.outputs,
        "names": [n.name for n in nodes],
        "ops": bytes(_OP_CODE[n.op] for n in nodes),
        "target_ids": _i32([targets(n.target) for n in nodes]), "targets": targets.items,
        "full_targets": {i: n.full_target for i, n in enumerate(nodes) if n.full_target is not None},
        "stack_ids": _i32([stacks(n.module_stack) for n in nodes]),
        "stacks": [[scopes((s.key, s.path, s.class_name)) for s in stack] for stack in stacks.items],
        "scopes": [list(s) for s in scopes.items], "unique": len(position) == len(nodes),
        "out_flat": out_flat, "out_off": _i32(out_off),
        "records": bytes(records), "rec_off": array(_I64, rec_off).tobytes(), "strings": strings.items,
        "subgraphs": {i: [encode_graph(s, meta_id) for s in n.subgraphs] for i, n in enumerate(nodes) if n.subgraphs},
        "edge_src": _i32([position[e.src] for e in edges]) if columnar_edges else None,
        "edge_dst": _i32([position[e.dst] for e in edges]) if columnar_edges else None,
        "edge_names": [[e.src, e.dst] for e in edges] if not columnar_edges else None,
        "edge_values": [e.value for e in edges],
        "value_names": [v.name for v in values],
        "value_kinds": _i32([kinds(v.kind) for v in values]), "kinds": kinds.items,
        "value_metas": _i32([meta_id(v.meta_json) for v in values]),
        "producers": [v.producer for v in values],
        "rare": encoder.encode(rare),
    }


def _i32(items: list[int]) -> bytes:
    return array(_I32, items).tobytes()


def _ids(data: Any, count: int, bound: int, typecode: str = _I32, low: int = 0) -> list[int]:
    """An int array of `count` ids in [low, bound), as a list; ValueError for anything else (a damaged block)."""
    column = array(typecode)
    if not isinstance(data, bytes) or len(data) != count * column.itemsize:
        raise ValueError("a column of the wrong length")
    column.frombytes(data)
    ids = column.tolist()
    if count and (min(ids) < low or max(ids) >= bound):
        raise ValueError("an id out of range")
    return ids


class _Columns:
    """What a graph's nodes need to decode their deferred fields: the records and the graph's string table."""

    __slots__ = ("records", "offsets", "strings", "names", "_positions")

    def __init__(self, records: bytes, offsets: list[int], strings: list[str], names: list[str] | None) -> None:
        self.records, self.offsets, self.strings, self.names = records, offsets, strings, names
        self._positions: dict[str, int] | None = None

    @property
    def fill_named(self) -> Callable[[ColumnNode], None] | None:
        return self._fill_named if self.names is not None else None

    def _fill_named(self, node: ColumnNode) -> None:
        positions = self._positions
        if positions is None:
            assert self.names is not None
            positions = self._positions = {name: i for i, name in enumerate(self.names)}
        self.fill(node, positions[node.name])

    def fill(self, node: ColumnNode, i: int) -> None:
        import msgspec

        raw = memoryview(self.records)[self.offsets[i]:self.offsets[i + 1]]
        args, meta = msgspec.msgpack.decode(raw, ext_hook=ext_hook)
        graphs = {s.name: s for s in node.subgraphs}
        strings = self.strings
        node.filled(tuple(Argument(name, _unmark(value, graphs), kind) for name, value, kind in args),
                    {k: strings[v] for k, v in meta})


def _unmark(v: Any, graphs: dict[str, Graph]) -> Any:
    if isinstance(v, SubgraphMark):
        return graphs[v.name]
    if isinstance(v, list):
        return [_unmark(x, graphs) for x in v]
    if isinstance(v, dict):
        return {k: _unmark(x, graphs) for k, x in v.items()}
    return v


def decode_graph(b: dict[str, Any], metas: list[Any], parsed: list[TensorMeta | None]) -> Graph:
    """The `Graph` of a block `encode_graph` wrote; `metas` is the entry's metadata table and `parsed` its parsed
    `TensorMeta`s, shared by every value holding the same dict. ValueError for a block that does not add up."""

    names: list[str] = b["names"]
    count = len(names)
    ops = b["ops"]
    if not isinstance(ops, bytes) or len(ops) != count or (count and max(ops) >= len(_OPS)):
        raise ValueError("a column of the wrong length")
    targets: list[str] = b["targets"]
    target_ids = _ids(b["target_ids"], count, len(targets))
    scopes = [ModuleScope(key, path, cls) for key, path, cls in b["scopes"]]
    stacks = [tuple(scopes[i] for i in ids) for ids in b["stacks"]]  # IndexError for a damaged one: a miss
    stack_ids = _ids(b["stack_ids"], count, len(stacks))
    out_flat: tuple[str | None, ...] = tuple(b["out_flat"])  # sliced into each node's outputs, tuples too
    out_off = _ids(b["out_off"], count + 1, len(out_flat) + 1)
    records: bytes = b["records"]
    rec_off = _ids(b["rec_off"], count + 1, len(records) + 1, _I64)
    full = {int(i): t for i, t in b["full_targets"].items()}
    subgraphs = {int(i): tuple(decode_graph(s, metas, parsed) for s in gs) for i, gs in b["subgraphs"].items()}
    if any(not 0 <= i < count for i in (*full, *subgraphs)):
        raise ValueError("a node position out of range")
    columns = _Columns(records, rec_off, b["strings"], names if b["unique"] else None)
    op_of = [_OPS[c] for c in ops]
    nodes: list[Node] = []
    append = nodes.append
    shared = columns.fill_named  # names are unique: a node finds its record by its name (no object per node)
    for i, name in enumerate(names):  # inputs and metadata decoded when first read (ColumnNode)
        append(ColumnNode(name, op_of[i], targets[target_ids[i]], (), out_flat[out_off[i]:out_off[i + 1]],
                          None, subgraphs.get(i) or (), full.get(i),  # type: ignore[arg-type]
                          parsed_module_stack=stacks[stack_ids[i]],
                          fill=shared if shared is not None else (columns.fill, i)))
    edge_values: list[str] = b["edge_values"]
    if b["edge_names"] is not None:
        edges = [Edge(s, d, v) for (s, d), v in zip(b["edge_names"], edge_values, strict=True)]
    else:
        src = _ids(b["edge_src"], len(edge_values), count)
        dst = _ids(b["edge_dst"], len(edge_values), count)
        # Edge's own __init__ (through object.__setattr__): its fields stay inline (see above), read faster
        edges = [Edge(names[si], names[di], v) for si, di, v in zip(src, dst, edge_values, strict=True)]
    graph = Graph(name=b["name"], nodes=nodes, edges=edges, values=_values(b, metas, parsed), inputs=b["inputs"],
                  outputs=b["outputs"])
    graph.__dict__["node_by_name"] = dict(zip(names, nodes))  # Graph.node_by_name's answer (the last of a name wins)
    return graph


def _values(b: dict[str, Any], metas: list[Any], parsed: list[TensorMeta | None]) -> dict[str, Value]:
    import msgspec

    names: list[str] = b["value_names"]
    kinds: list[str] = b["kinds"]
    kind_ids = _ids(b["value_kinds"], len(names), len(kinds))
    meta_ids = _ids(b["value_metas"], len(names), len(metas), low=-1)
    producers: list[str | None] = b["producers"]
    if len(producers) != len(names):
        raise ValueError("a column of the wrong length")
    rare = msgspec.msgpack.decode(b["rare"], type=dict[int, tuple[SymDim | None, str | None]])
    values: dict[str, Value] = {}
    for i, name in enumerate(names):
        m = meta_ids[i]
        if m < 0:
            values[name] = Value(name, kinds[kind_ids[i]], None, None, producers[i])
        else:
            # parsed once per distinct metadata, as Value.meta would
            values[name] = Value(name, kinds[kind_ids[i]], metas[m], None, producers[i], parsed_meta=parsed[m])
    for i, (expr, fqn) in rare.items():
        if not 0 <= i < len(names):
            raise ValueError("a value position out of range")
        v = values[names[i]]
        v.expr, v.class_fqn = expr, fqn
    return values
