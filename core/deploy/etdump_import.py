"""An ETDump recorded elsewhere (a phone, a board, another process), read back onto the `.pte` that ran it.

The files are data from a device, never code: they are read by ExecuTorch's own `Inspector` (core/deploy/etdump.py
`inspect`), never parsed here. What is checked first, so that a damaged or foreign file gets one line:
- each file is a regular file within its bound (`MAX_ETDUMP_BYTES`, `MAX_DEBUG_BUFFER_BYTES`: the Inspector reads both
  whole into memory), and the ETDump is a size-prefixed flatbuffer of ETDump's identifier (`ED00`) holding as many
  bytes as its prefix says: a truncated file is refused before ExecuTorch's reader (which runs `flatc`) sees it, and
  what `flatc` prints of a file it cannot read is the failure's detail, not the terminal's;
- every tensor a debug event names lies inside the debug buffer (core/deploy/etdump.py `check_debug_data`);
- the recording is of this method (`check_recorded_program`): every instruction it profiles is one the `.pte` has,
  running the kernel or delegate the event names, and, with an ETRecord, the op its debug handles name.

From the Inspector's events: each instruction's times over the runs the ETDump holds (`instruction_stats`: least,
median, p90 and count, the Inspector's own `PerfData`), and the events a delegate logged from inside itself
(`delegate_events`: XNNPACK's per-operator profiling, a vendor backend's), on the delegate call that ran them.
"""
from __future__ import annotations

import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.etdump import EVENT_NAMES_SKIPPED, EtdumpRun, check_debug_data, inspect, seconds_per_unit
from pt2_viewer.core.deploy.etrecord_choice import op_stem
from pt2_viewer.core.deploy.pte_map import instruction_names
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.util.stderr_capture import captured_stderr

MAX_ETDUMP_BYTES = 512 * 2**20
MAX_DEBUG_BUFFER_BYTES = 4 * 2**30
ETDUMP_ID = b"ED00"
AGREEING = 0.9  # of the kernel calls an ETRecord maps, how many must run an op its debug handles name
WHICH_FILES = ("Pass the ETDump the runtime wrote for this .pte (ETDumpGen's output) and the debug buffer written "
               "with it, copied whole.")


@dataclass
class OpTimes:
    """One instruction's (or one event's inside a delegate) times over the runs recorded, in seconds."""

    least: float
    median: float
    p90: float
    count: int


@dataclass
class DelegateEvent:
    """An event a delegate logged from inside itself, on the `.pte` node of the call that ran it."""

    node: str  # the delegate call's node in the `.pte` graph (delegate_0_18)
    event: str  # the backend's name for it ("Convolution (NHWC, F32) IGEMM #1")
    backend: str
    times: OpTimes
    source_nodes: list[str] = field(default_factory=list)  # where the ETRecord's delegate map names them


def _file(path: str, what: str, bound: int) -> Path:
    p = Path(path)
    if not p.is_file():
        raise JobFailure("load", f"The {what} '{p}' is not a file.", WHICH_FILES)
    size = p.stat().st_size
    if size > bound:
        raise JobFailure("load", f"The {what} '{p.name}' is {size:,} bytes, more than the {bound:,} the viewer "
                         "reads.", WHICH_FILES)
    return p


def recorded_run(etdump: str, debug_buffer: str | None) -> EtdumpRun:
    """The ETDump (and debug buffer) the user brought, checked to be whole before ExecuTorch reads them."""
    path = _file(etdump, "ETDump", MAX_ETDUMP_BYTES)
    with path.open("rb") as f:
        head = f.read(12)
    size = path.stat().st_size
    if len(head) < 12 or head[8:12] != ETDUMP_ID:
        raise JobFailure("load", f"'{path.name}' is not an ETDump (no '{ETDUMP_ID.decode()}' flatbuffer "
                         "identifier).", WHICH_FILES)
    (prefix,) = struct.unpack_from("<I", head, 0)
    if prefix != size - 4:
        raise JobFailure("load", f"The ETDump '{path.name}' is damaged or truncated: it says it holds {prefix:,} "
                         f"bytes, and {size - 4:,} follow.", WHICH_FILES)
    buffer = _file(debug_buffer, "debug buffer", MAX_DEBUG_BUFFER_BYTES) if debug_buffer else None
    return EtdumpRun(path, buffer, [])


def _why(failed: Exception) -> str:
    """Why ExecuTorch's reader failed, in words: its `flatc` exits (or crashes) on a flatbuffer it cannot read."""
    if isinstance(failed, subprocess.CalledProcessError):
        how = "crashed" if failed.returncode < 0 else f"exited with status {failed.returncode}"
        return f"its tables do not read (ExecuTorch's flatbuffer reader, flatc, {how})"
    return f"{type(failed).__name__}: {first_line(failed)}"


def read_recording(run: EtdumpRun, etrecord: Any | None, values: bool) -> Any:
    """ExecuTorch's Inspector over the recording (and the ETRecord): the ETDump read by ExecuTorch's reader, its
    debug events checked against the debug buffer when one is given, and required (`values`: numerics)."""
    from executorch.devtools.inspector._inspector_utils import gen_etdump_object

    name = run.etdump.name
    failed: Exception | None = None
    with captured_stderr([]) as said:
        try:
            etdump = gen_etdump_object(etdump_data=run.etdump.read_bytes())
        except Exception as e:
            failed = e
    if failed is not None:
        raise JobFailure("load", f"ExecuTorch cannot read the ETDump '{name}': {_why(failed)}.", WHICH_FILES,
                         "\n".join(said + [str(failed)])) from None
    logged = any(e.debug_event is not None for r in etdump.run_data or [] for e in r.events or [])
    if values and (run.debug_buffer is None or not logged):
        what = "its debug buffer (--debug-buffer RUN.bin)" if logged else \
            "an ETDump recorded with a debug buffer: this one logged no intermediate value"
        raise JobFailure("request" if logged else "load", f"Comparing op by op from '{name}' needs {what}.",
                         "Record with ETDumpGen's set_debug_buffer and bring both files.")
    if run.debug_buffer is not None:
        try:
            check_debug_data(etdump, run.debug_buffer.stat().st_size)
        except JobFailure as e:
            raise JobFailure("load", f"The ETDump '{name}' and the debug buffer '{run.debug_buffer.name}' do not "
                             f"belong together: {e}", WHICH_FILES) from None
    with captured_stderr([]) as said:
        try:
            return inspect(run, etrecord, f"the ETDump '{name}'", check=False)
        except JobFailure as e:
            failed = e
    raise JobFailure("load", str(failed), WHICH_FILES, "\n".join(said)) from None


def _execute_events(inspector: Any) -> Iterator[Any]:
    for block in inspector.event_blocks:
        if block.name == "Execute":
            yield from (e for e in block.events if e.name not in EVENT_NAMES_SKIPPED and e.perf_data is not None)


def _times(event: Any, scale: float) -> OpTimes:
    perf = event.perf_data
    return OpTimes(least=float(perf.min) * scale, median=float(perf.p50) * scale, p90=float(perf.p90) * scale,
                   count=len(perf.raw))


def instruction_stats(inspector: Any) -> dict[int, OpTimes]:
    """Each instruction's times over the recorded runs (kernel and delegate calls; events inside a delegate are
    `delegate_events`'), from the Inspector's own `PerfData`."""
    scale = seconds_per_unit(inspector)
    return {int(e._instruction_id): _times(e, scale) for e in _execute_events(inspector) if not e.is_delegated_op}


def delegate_events(inspector: Any, program: Any, by_handle: dict[int, list[str]] | None = None
                    ) -> list[DelegateEvent]:
    """The events delegates logged from inside themselves, each on its call's `.pte` node, in the order run; with the
    ETRecord's handles (`by_handle`), the source nodes the backend's debug handles name."""
    scale = seconds_per_unit(inspector)
    names = instruction_names(program)
    backends = {int(n.metadata["instruction"]): str(n.target).removeprefix("delegate.")
                for n in program.graph.nodes if "instruction" in n.metadata}
    out = []
    for e in _execute_events(inspector):
        if not e.is_delegated_op:
            continue
        handles = e.debug_handles
        handles = [] if handles is None else [handles] if isinstance(handles, int) else list(handles)
        sources = list(dict.fromkeys(n for h in handles for n in (by_handle or {}).get(h, [])))
        instruction = int(e._instruction_id)
        out.append(DelegateEvent(names.get(instruction, f"instruction_{instruction}"), str(e.name),
                                 str(e.delegate_backend_name or backends.get(instruction, "")), _times(e, scale),
                                 sources))
    return out


def _event_stem(name: str) -> str:
    """'native_call_convolution.out' -> 'convolution' ('native_call_quantized_decomposed::add.out' -> 'add'): the
    name ExecuTorch's runtime gives a kernel call, as `op_stem` names a target."""
    return name.removeprefix("native_call_").split("::")[-1].split(".")[0]


def check_recorded_program(inspector: Any, program: Any, pte: Path, etdump: Path, with_etrecord: bool) -> None:
    """Refuse an ETDump of another program: an instruction it profiles that the method lacks, or that runs another
    kernel (or no delegate) there; with an ETRecord, kernel calls whose debug handles name none of their ops."""
    shown = {int(n.metadata["instruction"]): str(n.target) for n in program.graph.nodes if "instruction" in n.metadata}
    agree = mapped = 0
    for e in _execute_events(inspector):
        i = int(e._instruction_id)
        target = shown.get(i)
        delegate = e.name == "DELEGATE_CALL" or e.is_delegated_op
        if target is None:
            why = f"it times instruction {i}, and '{program.name}' of '{pte.name}' has {len(shown)}"
        elif delegate != (op_stem(target) == "delegate"):
            why = f"instruction {i} is {target} in the file, '{e.name}' in the recording"
        elif not delegate and _event_stem(str(e.name)) != op_stem(target):
            why = f"instruction {i} runs {op_stem(target)} in the file, {_event_stem(str(e.name))} in the recording"
        else:
            why = ""
            if with_etrecord and not delegate and e.op_types:
                mapped += 1
                agree += _event_stem(str(e.name)) in {op_stem(t) for t in e.op_types}
        if why:
            raise JobFailure("mismatch", f"The ETDump '{etdump.name}' was not recorded from '{pte.name}': {why}.",
                             "Pass the .pte the device ran, the ETDump it wrote, and that .pte's ETRecord.")
    if with_etrecord and agree < AGREEING * mapped:
        raise JobFailure("mismatch", f"The ETDump '{etdump.name}' does not fit the ETRecord: only {agree} of the "
                         f"{mapped} kernel calls it times run an op their debug handles name.",
                         "Pass the ETRecord made when this .pte was lowered (--etrecord).")
    if not shown or not any(True for _ in _execute_events(inspector)):
        raise JobFailure("load", f"The ETDump '{etdump.name}' holds no timed instruction of '{program.name}'.",
                         "Record the run with ETDump on (ETDumpGen) and profiling enabled.")
