"""Read an ExecuTorch `.pte` into an `Archive` (one `Program` per method, `Archive.executorch` for the rest).

No torch, no executorch: the flatbuffer is read with the `flatbuffers` runtime (core/pte/flatbuffer.py) against the
pinned schema (core/pte/schema.py). A `.pte` is recognised by its magic, `ET12` at byte 4, whatever its name.
Everything wrong with a file, from a truncated header to a hostile offset, becomes a `PteError` for the user.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO

from pt2_viewer.core.model.executorch import (
    ConstantData,
    DelegateBlock,
    ExecutorchProgram,
    IoSpec,
    PteMethod,
    Segment,
)
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.pte.errors import PteError
from pt2_viewer.core.pte.flatbuffer import Buffer
from pt2_viewer.core.pte.memory import memory_plan
from pt2_viewer.core.pte.program_map import PlanMapper, expansion_cost, operator_text
from pt2_viewer.core.pte.schema import (
    FILE_IDENTIFIER,
    SCHEMA_SOURCE,
    PteFile,
    PtePlan,
    extended_header,
    read_program,
)
from pt2_viewer.core.pte.xnnpack import xnnpack_ops

HEAD_BYTES = 64
MAX_PROGRAM_BYTES = 2 * 1024 * 1024 * 1024  # the flatbuffer part; weights live in segments, which are never read


def read_pte(path: str | os.PathLike[str]) -> Archive:
    p = Path(path)
    name = p.name
    try:
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(HEAD_BYTES)
            if len(head) < 8 or head[4:6] != b"ET":
                raise PteError(f"'{name}' is not an ExecuTorch program: it does not start with the 'ET12' magic.")
            ident = head[4:8]
            if ident != FILE_IDENTIFIER:
                newer = ident[2:].isdigit() and int(ident[2:]) > int(FILE_IDENTIFIER[2:])
                raise PteError(
                    f"'{name}' is an ExecuTorch program of schema '{ident.decode(errors='replace')}', "
                    f"{'newer than' if newer else 'other than'} the one this viewer reads ({SCHEMA_SOURCE}). "
                    + ("Update PT2 Viewer, or export with the ExecuTorch version this viewer knows."
                       if newer else "Lower the model again with a current ExecuTorch."))
            header = extended_header(head)
            program_size, segment_base = header if header else (size, 0)
            if program_size > size or program_size < 8:
                raise PteError(f"'{name}' is truncated: its header says the program is {program_size:,} bytes, but "
                               f"the file has {size:,}. Copy or lower it again.")
            if segment_base and segment_base < program_size:
                raise PteError(f"'{name}' is damaged: its segments start at byte {segment_base:,}, inside the "
                               f"program ({program_size:,} bytes).")
            if program_size > MAX_PROGRAM_BYTES:
                raise PteError(f"'{name}' has a program part of {program_size / 1e9:.1f} GB, more than this viewer "
                               "reads.")
            f.seek(0)
            data = f.read(program_size)
    except OSError as e:
        raise PteError(f"Could not read '{p}': {e.strerror or e}.") from None
    try:
        pte = read_program(Buffer(data, name), size, segment_base)
        with open(p, "rb") as source:  # the delegates' payloads (segments) are read for what they say of themselves
            return _archive(p, pte, source)
    except OSError as e:
        raise PteError(f"Could not read '{p}': {e.strerror or e}.") from None
    except PteError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError, RecursionError, TypeError, KeyError) as e:
        raise PteError(f"'{name}' is not a readable ExecuTorch program ({type(e).__name__}: {e}). The file is "
                       "damaged or truncated.") from None


def _archive(path: Path, pte: PteFile, source: BinaryIO) -> Archive:
    warnings = list(pte.warnings)
    segments = [Segment(i, pte.segment_base + off, n, "") for i, (off, n) in enumerate(pte.segments)]
    holds: dict[int, list[str]] = {}
    for i, s in enumerate(segments):
        if s.offset + s.nbytes > pte.file_size:
            warnings.append(f"Segment {i} ({s.nbytes:,} bytes at byte {s.offset:,}) runs past the end of the file "
                            f"({pte.file_size:,} bytes): the file is truncated, and will not run.")
    constants, constant_names = _constants(pte, segments, holds)
    for key, seg in pte.named_data:
        holds.setdefault(seg, []).append(f"named data '{key}'")
    methods = []
    programs = []
    budget = 4 * pte.program_size + 100_000  # as the flatbuffer reader's: work in proportion to the file's size
    for plan in pte.plans:
        cost = expansion_cost(plan)
        if cost > budget:
            raise PteError(f"The method '{plan.name}' is damaged: its instructions name its lists {cost:,} entries "
                           f"over, more than a file of {pte.program_size:,} bytes can hold.")
        budget -= cost
        blocks = _delegates(plan, pte, segments, holds, warnings, source)
        mapper = PlanMapper(plan, blocks, constant_names, pte.version)
        program = mapper.program()
        nodes = {int(n.metadata.get("instruction", -1)): n.name for n in program.graph.nodes if "instruction" in
                 n.metadata}
        blocks = _with_nodes(plan, blocks, nodes)
        mapper.delegates = blocks
        programs.append(program)
        methods.append(PteMethod(
            name=plan.name,
            operators=[operator_text(n, o) for n, o in plan.operators],
            delegates=blocks,
            inputs=[_io(plan, i, mapper.value_names) for i in plan.inputs],
            outputs=[_io(plan, i, mapper.value_names) for i in plan.outputs],
            memory=memory_plan(plan, mapper.value_names),
            instructions=len(plan.instructions),
            values=len(plan.values),
            chains=plan.chains,
            input_spec=plan.input_spec,
            output_spec=plan.output_spec,
        ))
    segments = [Segment(s.index, s.offset, s.nbytes, ", ".join(holds.get(s.index, [])) or "unused")
                for s in segments]
    named = [(k, seg, segments[seg].nbytes if 0 <= seg < len(segments) else 0) for k, seg in pte.named_data]
    et = ExecutorchProgram(pte.identifier, pte.version, methods, segments, constants, named, pte.program_size,
                           pte.file_size)
    return Archive(path=str(path), root="", entries=[], programs=programs, archive_format="pte",
                   archive_version=pte.identifier, byteorder="little", warnings=warnings, executorch=et)


def _constants(pte: PteFile, segments: list[Segment], holds: dict[int, list[str]]
               ) -> tuple[list[ConstantData], dict[int, str]]:
    """Each constant's size (from the offsets into the constant segment, or the old inline buffers) and name."""
    sizes: list[int] = []
    if pte.constant_segment and pte.constant_segment[1]:
        seg, offsets = pte.constant_segment
        total = segments[seg].nbytes if 0 <= seg < len(segments) else 0
        holds.setdefault(seg, []).append("constants")
        ends = offsets[1:] + [total]
        sizes = [max(e - o, 0) for o, e in zip(offsets, ends)]
    elif pte.constant_buffer:
        sizes = list(pte.constant_buffer)
    for seg, _offsets in pte.mutable_segments:
        holds.setdefault(seg, []).append("mutable data")
    users: dict[int, list[str]] = {}
    for plan in pte.plans:
        for ev in plan.values:
            if ev.kind == "tensor" and ev.value.data_buffer_idx > 0 and ev.value.memory_id is None:
                users.setdefault(ev.value.data_buffer_idx, []).extend([ev.value.fqn] if ev.value.fqn else [])
    names = {idx: f"const_{idx}" for idx in users}
    constants = [ConstantData(idx, sizes[idx] if idx < len(sizes) else 0, tuple(dict.fromkeys(users.get(idx, []))))
                 for idx in range(1, len(sizes))]
    return constants, names


def _delegates(plan: PtePlan, pte: PteFile, segments: list[Segment], holds: dict[int, list[str]],
               warnings: list[str], source: BinaryIO) -> list[DelegateBlock]:
    """Each delegate block's backend, payload size and place, and (XNNPACK) the operators it took over."""
    out = []
    for k, d in enumerate(plan.delegates):
        if d.inline:
            n = pte.delegate_data[d.index] if 0 <= d.index < len(pte.delegate_data) else 0
            where = "inline"
        else:
            n = segments[d.index].nbytes if 0 <= d.index < len(segments) else 0
            where = f"segment {d.index}"
            holds.setdefault(d.index, []).append(f"delegate {d.backend} ({plan.name})")
        if (d.inline and not 0 <= d.index < len(pte.delegate_data)) or (not d.inline and not 0 <= d.index <
                                                                          len(segments)):
            warnings.append(f"The delegate {k} of '{plan.name}' ({d.backend}) points at {where} {d.index}, which "
                            "the file does not have: its payload is missing.")
        specs = tuple((key, _spec_text(value)) for key, value in d.compile_specs)
        ops: tuple[str, ...] = ()
        if d.backend == "XnnpackBackend" and not d.inline and 0 <= d.index < len(segments):
            ops = xnnpack_ops(source, segments[d.index].offset, segments[d.index].nbytes)
        out.append(DelegateBlock(k, d.backend, n, where, specs, ops=ops))
    return out


def _with_nodes(plan: PtePlan, blocks: list[DelegateBlock], nodes: dict[int, str]) -> list[DelegateBlock]:
    first: dict[int, str] = {}
    for pc, ins in enumerate(plan.instructions):
        if ins.kind == "delegate" and ins.index not in first and pc in nodes:
            first[ins.index] = nodes[pc]
    return [DelegateBlock(b.index, b.backend, b.nbytes, b.location, b.compile_specs, first.get(b.index, ""), b.ops)
            for b in blocks]


def _spec_text(value: bytes) -> str:
    try:
        text = value.decode("utf-8")
        if text.isprintable():
            return text
    except UnicodeDecodeError:
        pass
    return value[:16].hex() + ("…" if len(value) > 16 else "") + f" ({len(value)} bytes)"


def _io(plan: PtePlan, i: int, names: list[str]) -> IoSpec:
    ev = plan.values[i]
    if ev.kind == "tensor":
        return IoSpec(names[i], ev.value.dtype, tuple(ev.value.sizes))
    return IoSpec(names[i], ev.kind, None, ev.value if isinstance(ev.value, (int, float, bool, str)) else None)
