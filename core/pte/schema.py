"""ExecuTorch's `program.fbs` as the few dataclasses this viewer needs, and the reader that fills them.

Pinned to the schema shipped with ExecuTorch 1.5 (`executorch/exir/_serialize/program.fbs`, BSD licence): file
identifier `ET12`, `Program.version` 0. Slot numbers below are the fields' declaration order in that file (a union
takes two: its type, then its value). A file with another identifier is refused, naming both; a newer
`Program.version` is read as far as this schema goes, with a warning.

Layout of a `.pte` (`exir/_serialize/_program.py`): the flatbuffer (root offset, then `ET12` at byte 4), an
optional extended header at byte 8 (`eh00`, its length, the flatbuffer's size, the offset of the first segment and
the segments' size), then the segments: delegate payloads, constant tensors and named data, outside the flatbuffer.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.pte.flatbuffer import Buffer, FbTable

FILE_IDENTIFIER = b"ET12"
SCHEMA_VERSION = 0  # Program.version written by ExecuTorch 1.5 (executorch/exir/version.py)
SCHEMA_SOURCE = "ExecuTorch 1.5 program.fbs (identifier ET12, version 0)"
EXTENDED_HEADER_MAGIC = b"eh00"
EXTENDED_HEADER_MIN = 24  # magic, length, program size, segment base offset (the segment data size is newer)

# ScalarType (scalar_type.fbs) -> torch's dtype spelling.
SCALAR_TYPES = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32", 7: "float64",
    11: "bool", 12: "qint8", 13: "quint8", 14: "qint32", 15: "bfloat16", 16: "quint4x2", 17: "quint2x4",
    22: "bits16", 23: "float8_e5m2", 24: "float8_e4m3fn", 25: "float8_e5m2fnuz", 26: "float8_e4m3fnuz",
    27: "uint16", 28: "uint32", 29: "uint64",
}
ELEMENT_BYTES = {
    "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2, "float32": 4, "float64": 8, "bool": 1,
    "qint8": 1, "quint8": 1, "qint32": 4, "bfloat16": 2, "quint4x2": 1, "quint2x4": 1, "bits16": 2,
    "float8_e5m2": 1, "float8_e4m3fn": 1, "float8_e5m2fnuz": 1, "float8_e4m3fnuz": 1, "uint16": 2, "uint32": 4,
    "uint64": 8,
}
DYNAMISM = {0: "static", 1: "dynamic_bound", 2: "dynamic_unbound"}
# union KernelTypes, in declaration order (0 is NONE)
VALUE_KINDS = {0: "none", 1: "null", 2: "int", 3: "bool", 4: "double", 5: "tensor", 6: "string", 7: "int_list",
               8: "double_list", 9: "bool_list", 10: "tensor_list", 11: "optional_tensor_list"}
# union InstructionArguments
INSTRUCTION_KINDS = {1: "kernel", 2: "delegate", 3: "move", 4: "jump_false", 5: "free"}
MAX_RANK = 64


@dataclass
class PteTensor:
    dtype: str
    sizes: tuple[int, ...]
    dim_order: tuple[int, ...]
    dynamism: str
    data_buffer_idx: int  # > 0: constant data (constant_segment.offsets[idx] or constant_buffer[idx])
    memory_id: int | None  # planned: the non-constant buffer it lives in
    memory_offset: int | None
    requires_grad: bool = False
    fqn: str = ""
    external: bool = False  # data outside the file (a .ptd), found by fqn
    storage_offset: int = 0

    @property
    def nbytes(self) -> int:
        n = ELEMENT_BYTES.get(self.dtype, 1)
        for s in self.sizes:
            n *= max(s, 0)
        return n


@dataclass
class PteValue:
    kind: str  # VALUE_KINDS
    value: Any = None  # a literal, a PteTensor, or (tensor lists) a list of value indices, -1 for None


@dataclass
class PteInstruction:
    kind: str  # INSTRUCTION_KINDS or "unknown"
    index: int = -1  # operator (kernel), delegate (delegate), destination (jump_false)
    args: tuple[int, ...] = ()  # value indices: kernel/delegate args, (from, to) of a move, (cond,) / (value,)
    frames: list[tuple[str, int, str, str]] = field(default_factory=list)  # (file, line, function, code)
    chain: int = 0


@dataclass
class PteDelegate:
    backend: str
    inline: bool  # True: Program.backend_delegate_data[index]; False: Program.segments[index]
    index: int
    compile_specs: list[tuple[str, bytes]]


@dataclass
class PtePlan:
    name: str
    values: list[PteValue]
    inputs: list[int]
    outputs: list[int]
    instructions: list[PteInstruction]
    chains: int
    operators: list[tuple[str, str]]  # (name, overload)
    delegates: list[PteDelegate]
    buffer_sizes: list[int]  # non_const_buffer_sizes, index 0 reserved
    input_spec: str = ""
    output_spec: str = ""


@dataclass
class PteFile:
    identifier: str
    version: int
    plans: list[PtePlan]
    constant_buffer: list[int]  # sizes of inline constants (old files)
    delegate_data: list[int]  # sizes of inline delegate payloads
    segments: list[tuple[int, int]]  # (offset from the segment base, size)
    constant_segment: tuple[int, list[int]] | None  # (segment index, offsets)
    mutable_segments: list[tuple[int, list[int]]]
    named_data: list[tuple[str, int]]  # (key, segment index)
    program_size: int
    segment_base: int
    file_size: int
    warnings: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------------------------
def extended_header(head: bytes) -> tuple[int, int] | None:
    """(flatbuffer size, segment base offset) from the extended header at byte 8, None if there is none."""
    if len(head) < 8 + EXTENDED_HEADER_MIN or head[8:12] != EXTENDED_HEADER_MAGIC:
        return None
    length, program_size, segment_base = struct.unpack_from("<IQQ", head, 12)
    if length < EXTENDED_HEADER_MIN:
        return None
    return program_size, segment_base


def read_program(buf: Buffer, file_size: int, segment_base: int) -> PteFile:
    root = buf.root()
    version = int(root.scalar(0, "uint"))
    warnings = []
    if version > SCHEMA_VERSION:
        warnings.append(f"This program says it is schema version {version}; this viewer reads {SCHEMA_SOURCE}. "
                        "Fields newer than that are not shown.")
    constant_segment = None
    cs = root.table(5, "the constant segment")
    if cs is not None:
        constant_segment = (int(cs.scalar(0, "uint")), [int(x) for x in cs.scalars(1, "ulong", "constant offsets")])
    return PteFile(
        identifier=FILE_IDENTIFIER.decode(),
        version=version,
        plans=root.each(1, "the execution plans", _plan),
        constant_buffer=root.each(2, "the constant buffers", lambda t: t.vector_len(0, 1, "a constant buffer")),
        delegate_data=root.each(3, "the delegate data", lambda t: t.vector_len(0, 1, "a delegate's data")),
        segments=root.each(4, "the segments", lambda t: (int(t.scalar(0, "ulong")), int(t.scalar(1, "ulong")))),
        constant_segment=constant_segment,
        mutable_segments=root.each(6, "the mutable data segments", lambda t: (
            int(t.scalar(0, "uint")), [int(x) for x in t.scalars(1, "ulong", "mutable data offsets")])),
        named_data=root.each(7, "the named data", lambda t: (t.string(0, "a named data key"),
                                                              int(t.scalar(1, "uint")))),
        program_size=buf.size,
        segment_base=segment_base,
        file_size=file_size,
        warnings=warnings,
    )


def _plan(t: FbTable) -> PtePlan:
    meta = t.table(1, "the container metadata")
    chains = t.tables(5, "the chains")
    instructions: list[PteInstruction] = []
    for c, chain in enumerate(chains):
        these = chain.each(2, "the instructions", _instruction)
        frames = chain.each(3, "the stack traces", lambda fl: fl.each(0, "the frames", _frame))
        for i, ins in enumerate(these):
            ins.chain = c
            if i < len(frames):
                ins.frames = frames[i]
        instructions.extend(these)
    return PtePlan(
        name=t.string(0, "a method's name"),
        values=t.each(2, "the values", _value),
        inputs=[int(x) for x in t.scalars(3, "int", "the method's inputs")],
        outputs=[int(x) for x in t.scalars(4, "int", "the method's outputs")],
        instructions=instructions,
        chains=len(chains),
        operators=t.each(6, "the operators", lambda o: (o.string(0, "an operator's name"),
                                                         o.string(1, "an operator's overload"))),
        delegates=t.each(7, "the delegates", _delegate),
        buffer_sizes=[int(x) for x in t.scalars(8, "long", "the planned buffer sizes")],
        input_spec=meta.string(0, "the input spec") if meta else "",
        output_spec=meta.string(1, "the output spec") if meta else "",
    )


def _frame(t: FbTable) -> tuple[str, int, str, str]:
    return (t.string(0, "a frame's file"), int(t.scalar(1, "int")), t.string(2, "a frame's function"),
            t.string(3, "a frame's code"))


def _delegate(t: FbTable) -> PteDelegate:
    ref = t.table(1, "a delegate's data reference")
    specs = t.each(2, "a delegate's compile specs", lambda s: (
        s.string(0, "a compile spec key"), _ubytes(s, 1, "a compile spec value")))
    return PteDelegate(
        backend=t.string(0, "a delegate's backend id"),
        inline=ref is None or int(ref.scalar(0, "byte")) == 0,
        index=int(ref.scalar(1, "uint")) if ref else 0,
        compile_specs=specs,
    )


def _ubytes(t: FbTable, slot: int, what: str, limit: int = 4096) -> bytes:
    n = t.vector_len(slot, 1, what)
    return bytes(int(x) for x in t.scalars(slot, "ubyte", what)[:limit]) if n else b""


def _instruction(t: FbTable) -> PteInstruction:
    kind, args = t.union(0, 1, "an instruction")
    name = INSTRUCTION_KINDS.get(kind, "unknown")
    if args is None or name == "unknown":
        return PteInstruction("unknown", index=kind)
    if name in ("kernel", "delegate"):
        return PteInstruction(name, int(args.scalar(0, "int")), tuple(int(x) for x in args.scalars(
            1, "int", "an instruction's arguments")))
    if name == "move":
        return PteInstruction(name, -1, (int(args.scalar(0, "int")), int(args.scalar(1, "int"))))
    if name == "jump_false":
        return PteInstruction(name, int(args.scalar(1, "int")), (int(args.scalar(0, "int")),))
    return PteInstruction(name, -1, (int(args.scalar(0, "int")),))


def _value(t: FbTable) -> PteValue:
    kind_code, v = t.union(0, 1, "a value")
    kind = VALUE_KINDS.get(kind_code, "unknown")
    if v is None:
        return PteValue("none" if kind_code == 0 else kind)
    if kind == "null":
        return PteValue(kind)
    if kind in ("int", "bool", "double"):
        return PteValue(kind, v.scalar(0, {"int": "long", "bool": "bool", "double": "double"}[kind]))
    if kind == "string":
        return PteValue(kind, v.string(0, "a string value"))
    if kind == "tensor":
        return PteValue(kind, _tensor(v))
    if kind in ("int_list", "double_list", "bool_list"):
        return PteValue(kind, v.scalars(0, {"int_list": "long", "double_list": "double", "bool_list": "bool"}[kind],
                                        "a list value"))
    if kind in ("tensor_list", "optional_tensor_list"):
        return PteValue(kind, [int(x) for x in v.scalars(0, "int", "a tensor list")])
    return PteValue("unknown", kind_code)


def _tensor(t: FbTable) -> PteTensor:
    code = int(t.scalar(0, "byte"))
    sizes = tuple(int(x) for x in t.scalars(2, "int", "a tensor's sizes"))
    dim_order = tuple(int(x) for x in t.scalars(3, "ubyte", "a tensor's dim order"))
    if len(sizes) > MAX_RANK:
        raise t.buf.damaged(f"a tensor has {len(sizes)} dimensions")
    alloc = t.table(6, "a tensor's allocation")
    extra = t.table(9, "a tensor's extra info")
    offset = None
    if alloc is not None:
        offset = int(alloc.scalar(1, "uint")) | (int(alloc.scalar(2, "uint")) << 32)
    return PteTensor(
        dtype=SCALAR_TYPES.get(code, f"scalar_type{code}"),
        sizes=sizes,
        dim_order=dim_order,
        dynamism=DYNAMISM.get(int(t.scalar(8, "byte")), "unknown"),
        data_buffer_idx=int(t.scalar(5, "uint")),
        memory_id=int(alloc.scalar(0, "uint")) if alloc is not None else None,
        memory_offset=offset,
        requires_grad=bool(t.scalar(4, "bool")),
        fqn=extra.string(1, "a tensor's name") if extra else "",
        external=bool(extra and int(extra.scalar(2, "byte")) == 1),
        storage_offset=int(t.scalar(1, "int")),
    )
