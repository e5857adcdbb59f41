"""What an ExecuTorch `.pte` holds beyond a program graph: delegate blocks, the memory plan, constants and segments.

The graph of each method is an ordinary `Program` (instructions as nodes, values as tensors), so every view of a
program works on it unchanged; these records say what that model cannot, and hang off `Archive.executorch`.
Built by `core/pte/` without torch or executorch. msgspec structs: records declared without generating code, which
a dataclass does at import (this module is imported by every start-up, as `Archive.executorch`'s type).
"""
from __future__ import annotations

import msgspec


class DelegateBlock(msgspec.Struct, frozen=True):
    """One lowered subgraph: the backend that runs it and its payload (the backend's own compiled form)."""

    index: int
    backend: str  # "XnnpackBackend", as the file spells it
    nbytes: int
    location: str  # "inline" or "segment N"
    compile_specs: tuple[tuple[str, str], ...] = ()
    node: str = ""  # the graph node of its first call
    ops: tuple[str, ...] = ()  # the operators it took over, where the payload says so


class PlannedTensor(msgspec.Struct, frozen=True):
    """A tensor the memory planner placed: its buffer, offset, size, and the instructions it lives between."""

    value: str
    buffer: int  # memory id (1 is the first planned buffer)
    offset: int
    nbytes: int
    first: int  # index of the instruction that first touches it (-1: a method input, live from the start)
    last: int  # index of the last instruction that touches it (len(instructions): a method output)


class MemoryPlan(msgspec.Struct):
    """What a method's memory planning decided: its planned buffers and the tensors placed in them."""

    buffers: list[int]  # planned buffer sizes in bytes, memory id 1 first (the file's non_const_buffer_sizes[1:])
    tensors: list[PlannedTensor] = msgspec.field(default_factory=list)
    instructions: int = 0

    @property
    def peak(self) -> int:
        """What the runtime allocates for this method: every planned buffer, all at once."""
        return sum(self.buffers)

    def live_bytes(self) -> list[int]:
        """Bytes of planned tensors alive at each instruction (what the plan must at least hold there)."""
        live = [0] * max(self.instructions, 1)
        for t in self.tensors:
            for i in range(max(t.first, 0), min(t.last, len(live) - 1) + 1):
                live[i] += t.nbytes
        return live


class IoSpec(msgspec.Struct, frozen=True):
    """One input or output of a method, as the .pte declares it."""

    value: str
    dtype: str  # "float32"; for a non-tensor input its kind ("int", "bool", ...)
    shape: tuple[int, ...] | None  # None for a non-tensor
    default: int | float | bool | str | None = None  # a non-tensor input's value as the file holds it


class PteMethod(msgspec.Struct):
    """One method of an ExecuTorch program (`forward`, ...): its operators, delegated blocks, I/O and memory."""

    name: str
    operators: list[str]  # "aten::add.out", as the file spells it
    delegates: list[DelegateBlock]
    inputs: list[IoSpec]
    outputs: list[IoSpec]
    memory: MemoryPlan
    instructions: int
    values: int
    chains: int = 1
    input_spec: str = ""  # the pytree spec ExecuTorch keeps for flattening inputs
    output_spec: str = ""


class Segment(msgspec.Struct, frozen=True):
    """A data segment stored after the flatbuffer, and what it holds."""

    index: int
    offset: int  # from the start of the file
    nbytes: int
    holds: str  # "delegate XnnpackBackend (forward)", "constants", "named data 'key'", ...


class ConstantData(msgspec.Struct, frozen=True):
    """A constant buffer of the program, and the values that use it."""

    index: int  # data_buffer_idx
    nbytes: int
    names: tuple[str, ...]  # the values that use it (a fully qualified name when the file has one)


class ExecutorchProgram(msgspec.Struct):
    """What a `.pte` file holds, read from its flatbuffer without ExecuTorch (core/pte/reader.py)."""

    identifier: str  # "ET12"
    schema_version: int  # Program.version
    methods: list[PteMethod]
    segments: list[Segment]
    constants: list[ConstantData]
    named_data: list[tuple[str, int, int]]  # (key, segment index, bytes)
    program_bytes: int  # the flatbuffer
    file_bytes: int

    def method(self, name: str) -> PteMethod:
        for m in self.methods:
            if m.name == name:
                return m
        raise KeyError(name)
