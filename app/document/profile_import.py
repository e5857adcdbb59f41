"""View > Overlay > Import Profile…: a `torch.profiler` Chrome trace recorded on any machine, of the program's eager
module (on an `.onnx` tab, ONNX Runtime's profile of the model, core/profile/onnx_runtime.py), or with Import
Compiled Profile… of its code compiled by torch.compile together with that run's TORCH_TRACE folder (whose provenance
names each kernel's nodes; an AOTInductor package's own provenance is used without asking), attributed to the
program's nodes (core/profile/, docs/profile.md) and painted with the run-time overlay a local run paints: fastest to
slowest, a collapsed group the sum of its nodes, the legend the two times. Details lists, under the overlay's name,
each node's calls, total, mean, device and its events.

The trace is read and attributed in a thread (`ProfileLoader`: JSON, no torch, bounded: core/profile/trace_file.py,
core/trace/provenance.py), so a big trace never freezes the window; a trace the program did not run is refused in one
line on the status bar."""
from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal, SignalInstance

from pt2_viewer.core.graph.overlays import Overlay, run_time_overlay
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.load import profile_attribution
from pt2_viewer.core.profile.model import Attribution, TraceEvent
from pt2_viewer.core.util.words import format_seconds

PROFILE_TIME = "Profile time"  # the overlay's name: a local run's own stays "Run time" beside it
EVENTS_LISTED = 8  # a node's events Details lists (a kernel-heavy op launches many)
KERNEL_CHARS = 30  # a compiled kernel's name in Details, at most (cut in the middle)
TRACE_FILES = "torch.profiler Chrome trace (*.json *.json.gz *.gz)"
ONNX_PROFILE_FILES = "ONNX Runtime profile (onnxruntime_profile_*.json *.json)"
TORCH_TRACE_TITLE = "The compiled run's TORCH_TRACE folder (its kernels' provenance)"


def import_dialog(archive: Archive) -> tuple[str, str, str]:
    """The file dialog's title, folder and filter: ONNX Runtime's profile for an `.onnx`, else a torch.profiler
    trace."""
    if archive.archive_format == "onnx":
        return "Import an ONNX Runtime profile", archive.path, ONNX_PROFILE_FILES
    return "Import a torch.profiler trace", archive.path, TRACE_FILES


def profile_overlay(result: Attribution) -> Overlay:
    """The run-time overlay of a trace's per-node times, its Details rows and its notes (runs, unattributed)."""
    overlay = run_time_overlay({n.node: n.us / 1e6 for n in result.nodes if n.us > 0})
    overlay.name = PROFILE_TIME
    for n in result.nodes:
        rows = [("calls", str(n.calls)), ("total", format_seconds(n.us / 1e6)),
                ("mean", format_seconds(n.mean_us / 1e6)), ("device", n.device)]
        rows += [("event", _event_text(e)) for e in n.events[:EVENTS_LISTED]]
        if len(n.events) > EVENTS_LISTED:
            rows.append(("event", f"… {len(n.events) - EVENTS_LISTED} more"))
        overlay.rows[n.node] = rows
    runs = "run" if result.calls == 1 else "runs"
    overlay.notes = [f"{result.calls} {runs} on {result.device}",
                     f"{format_seconds(result.unattributed_us / 1e6)} unattributed", *result.notes]
    return overlay


def _event_text(e: TraceEvent) -> str:
    """`aten::conv2d: 709 µs`; a compiled kernel's share time first, its long name cut in the middle, so its start
    and its call (`_relu_4:14`) stay in view: `25.8 µs (1/10) cpp_fused_…ution_relu_4:14` (the column
    elides word by word, so a whole name past its width showed as a bare `…`)."""
    if not e.shared_by:
        return f"{e.name}: {format_seconds(e.dur / 1e6)}"
    share = f" (1/{e.shared_by})" if e.shared_by > 1 else ""
    name = e.name if len(e.name) <= KERNEL_CHARS else f"{e.name[:10]}…{e.name[-(KERNEL_CHARS - 11):]}"
    return f"{format_seconds(e.dur / 1e6)}{share} {name}"


class ProfileLoader(QObject):
    """`load(...)` reads and attributes a trace in a thread: `read(path, Overlay)` or `failed(message)`, delivered
    on the GUI thread (the loader lives there)."""

    read = Signal(str, object)
    failed = Signal(str)

    def load(self, archive: Archive, program: Program, path: str, torch_trace: str | None = None) -> None:
        threading.Thread(target=self._run, args=(archive, program, path, torch_trace), daemon=True,
                         name=f"import profile {path}").start()

    def _run(self, archive: Archive, program: Program, path: str, torch_trace: str | None) -> None:
        try:
            overlay = profile_overlay(profile_attribution(program, path, torch_trace, program_label=program.name,
                                                          archive=archive))
        except ProfileError as e:
            self._emit(self.failed, str(e))
        except Exception as e:  # a bug must not take the window down; say what happened, in one line
            self._emit(self.failed, f"Could not import the profile '{path}': internal error {type(e).__name__}: {e}")
        else:
            self._emit(self.read, path, overlay)

    def _emit(self, signal: SignalInstance, *args: object) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:  # the document was closed while the trace was read: nobody is waiting
            pass


def reading_line(path: str, torch_trace: str | None) -> str:
    return f"Reading profile {Path(path).name}" + (f" with {Path(torch_trace).name}'s provenance" if torch_trace
                                                   else "") + "…"


def status_line(path: str, overlay: Overlay) -> str:
    return f"Profile {Path(path).name}: {len(overlay.values)} nodes timed ({'; '.join(overlay.notes)})"
