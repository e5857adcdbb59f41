"""Run a `.pte` with ExecuTorch's ETDump and its debug buffer, and read the run back with ExecuTorch's `Inspector`.

`Runtime.load_program(..., enable_etdump=True, debug_buffer_size=N)` (the loader the run job uses) records a profile
event per instruction and per delegate call, and writes each instruction's outputs (a delegate call's inputs and
outputs) into the debug buffer; `write_etdump_result_to_file` saves both. The ETDump is data from a run, never code:
it is parsed by ExecuTorch's flatbuffer reader, and before the `Inspector` slices tensors out of the debug buffer,
every tensor the ETDump names is checked to lie inside it (`check_debug_data`).

What the window and the jobs need from a run:
- `runtime_values(inspector)`: Inspector's own debug handle -> (value, number of outputs) of each instruction and
  delegate call, with the instruction that produced it;
- `instruction_times(inspector)`: seconds per instruction (least over the runs), a delegate call's included.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.errors import JobFailure, first_line

DEFAULT_DEBUG_BUFFER_MB = 256
MAX_DIMS = 64
MAX_TENSOR_BYTES = 1 << 40
EVENT_NAMES_SKIPPED = ("Method::init", "Program::load_method", "Method::execute", "OPERATOR_CALL")


@dataclass
class EtdumpRun:
    """Where one run's ETDump and debug buffer were written, and what the method returned."""

    etdump: Path
    debug_buffer: Path | None  # None: an ETDump recorded without one (times alone)
    outputs: Sequence[Any]


def run_with_etdump(pte: Path, method: str, flat_inputs: list[Any], work: Path, buffer_mb: float,
                    runs: int = 1) -> EtdumpRun:
    """Run `method` of `pte` `runs` times with ETDump on, with a debug buffer of `buffer_mb` (0: none, for times
    alone); the files go to `work` (the job's folder)."""
    try:
        from executorch.runtime import Runtime
    except ImportError as e:
        raise JobFailure("missing_module", f"Running a .pte needs ExecuTorch's runtime ({first_line(e)}).",
                         "pip install executorch") from None
    size = int(buffer_mb * 2**20) if buffer_mb > 0 else 0
    try:
        program = Runtime.get().load_program(pte, enable_etdump=True, debug_buffer_size=size)
        loaded = program.load_method(method)
    except Exception as e:
        raise JobFailure("load", f"ExecuTorch could not load '{pte.name}' ({method}) with ETDump: {first_line(e)}",
                         "A delegate missing from this runtime, or a newer file than the runtime, are the usual "
                         "causes.") from e
    if loaded is None:
        raise JobFailure("request", f"'{pte.name}' has no method '{method}'.", "Name one of its methods.")
    outputs: Sequence[Any] = []
    try:
        for _ in range(max(runs, 1)):
            outputs = loaded.execute(flat_inputs)
    except Exception as e:
        raise JobFailure("run", f"Running {pte.name} with ETDump raised {type(e).__name__}: {first_line(e)}",
                         "Check the inputs against the file's inputs (pt2-viewer info FILE), or raise the debug "
                         "buffer (--budget-mb).") from e
    work.mkdir(parents=True, exist_ok=True)
    etdump, debug = work / "run.etdp", work / "run.debug"
    program.write_etdump_result_to_file(str(etdump), str(debug))
    return EtdumpRun(etdump, debug, outputs)


def check_debug_data(etdump: Any, buffer_size: int) -> None:
    """Refuse an ETDump whose debug events name tensors outside the debug buffer, of absurd rank or size."""
    for run in etdump.run_data or []:
        for event in run.events or []:
            entry = event.debug_event.debug_entry if event.debug_event is not None else None
            if entry is None:
                continue
            tensors = ([entry.tensor] if entry.tensor is not None else []) + \
                (list(entry.tensor_list.tensors) if entry.tensor_list is not None else [])
            for t in tensors:
                _check_tensor(t, buffer_size)


_ITEM_BYTES = {"BYTE": 1, "CHAR": 1, "BOOL": 1, "BITS16": 2, "UINT16": 2, "SHORT": 2, "HALF": 2, "BFLOAT16": 2,
               "INT": 4, "FLOAT": 4, "DOUBLE": 8, "LONG": 8}


def _check_tensor(t: Any, buffer_size: int) -> None:
    sizes = list(t.sizes or [])
    bad = None
    if len(sizes) > MAX_DIMS or any(not isinstance(s, int) or s < 0 for s in sizes):
        bad = f"sizes {sizes[:8]}"
    else:
        nbytes = math.prod(sizes) * _ITEM_BYTES.get(getattr(t.scalar_type, "name", str(t.scalar_type)), 8)
        offset = t.offset
        if nbytes > MAX_TENSOR_BYTES:
            bad = f"a tensor of {nbytes:,} bytes"
        elif nbytes and (offset is None or offset < 0 or offset + nbytes > buffer_size):
            bad = f"{nbytes:,} bytes at offset {offset} of a {buffer_size:,}-byte debug buffer"
    if bad:
        raise JobFailure("run", f"The run's ETDump names {bad}: it does not fit its debug buffer.",
                         "Raise the debug buffer (--budget-mb), or run again.")


def inspect(run: EtdumpRun, etrecord: Any | None, what: str = "the run's ETDump", check: bool = True) -> Any:
    """ExecuTorch's Inspector over the run (and the ETRecord, when there is one), the debug data checked first
    (`check`: False for an ETDump read for its times alone, without its debug buffer)."""
    import warnings

    from executorch.devtools import Inspector
    from executorch.devtools.inspector._inspector_utils import gen_etdump_object

    data = run.etdump.read_bytes()
    size = run.debug_buffer.stat().st_size if run.debug_buffer is not None and run.debug_buffer.exists() else 0
    try:
        if check:
            check_debug_data(gen_etdump_object(etdump_data=data), size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Inspector(etdump_data=data, etrecord=etrecord,
                             debug_buffer_path=str(run.debug_buffer) if size else None)
    except JobFailure:
        raise
    except Exception as e:
        raise JobFailure("run", f"ExecuTorch's Inspector could not read {what}: {type(e).__name__}: "
                         f"{first_line(e)}", "The log has the full message.") from e


@dataclass
class RuntimeValue:
    """One instruction's (or delegate call's) logged value, as the Inspector keys it."""

    handles: tuple[int, ...]
    value: Any
    num_outputs: int
    instruction: int  # the instruction that produced it (the last, when several share handles)
    delegate: str = ""  # the backend, when the value is where it leaves a delegate
    events: list[str] = field(default_factory=list)


def runtime_values(inspector: Any) -> dict[tuple[int, ...], RuntimeValue]:
    """Inspector's own runtime intermediate outputs (debug handles merged where they overlap, as it compares them),
    each with the instruction that produced it."""
    values, _names = inspector._get_runtime_intermediate_outputs_and_op_names()
    producers: list[tuple[set[int], int, str, str]] = []
    for block in inspector.event_blocks:
        for event in block.events:
            if event.debug_handles is None or not event.op_types or event.name in EVENT_NAMES_SKIPPED:
                continue
            handles = {event.debug_handles} if isinstance(event.debug_handles, int) else set(event.debug_handles)
            delegate = str(event.delegate_backend_name or "") if event.name == "DELEGATE_CALL" else ""
            producers.append((handles, int(event._instruction_id), delegate, str(event.name)))
    out: dict[tuple[int, ...], RuntimeValue] = {}
    for key, (value, num_outputs) in values.items():
        mine = [p for p in producers if p[0] <= set(key)] or [p for p in producers if p[0] & set(key)]
        last = max(mine, key=lambda p: p[1]) if mine else (set(), -1, "", "")
        out[key] = RuntimeValue(tuple(key), value, int(num_outputs), last[1], last[2], [p[3] for p in mine])
    return out


def instruction_times(inspector: Any) -> dict[int, float]:
    """Seconds per instruction of the method's chain 0 (least over the runs logged), from the Execute block: kernel
    calls (`native_call_*`) and delegate calls (`DELEGATE_CALL`); events inside a delegate are left to their call."""
    times: dict[int, float] = {}
    scale = seconds_per_unit(inspector)
    for block in inspector.event_blocks:
        if block.name != "Execute":
            continue
        for event in block.events:
            if event.name in EVENT_NAMES_SKIPPED or event.is_delegated_op or event.perf_data is None:
                continue
            raw = [float(x) for x in event.perf_data.raw]
            if raw:
                times[int(event._instruction_id)] = min(raw) * scale
    return times


def seconds_per_unit(inspector: Any) -> float:
    scale = getattr(inspector, "_target_time_scale", None)
    return {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(str(getattr(scale, "value", "ms")), 1e-3)
