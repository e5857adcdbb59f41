"""View > Overlay > Import Profile…: a `torch.profiler` Chrome trace of the program's eager module, recorded on any
machine, attributed to the program's nodes (core/profile/, docs/profile.md) and painted with the run-time overlay a
local run paints: fastest to slowest, a collapsed group the sum of its nodes, the legend the two times. Details lists,
under the overlay's name, each node's calls, total, mean, device and its events.

The trace is read in this process (JSON, no torch, bounded: core/profile/trace_file.py); a trace the program did not
run is refused in one line on the status bar."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.graph.overlays import Overlay, run_time_overlay
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.profile.attribute import attribute
from pt2_viewer.core.profile.model import Attribution
from pt2_viewer.core.profile.trace_file import read_trace
from pt2_viewer.core.util.words import format_seconds

PROFILE_TIME = "Profile time"  # the overlay's name: a local run's own stays "Run time" beside it
EVENTS_LISTED = 8  # a node's events Details lists (a kernel-heavy op launches many)
TRACE_FILES = "torch.profiler Chrome trace (*.json *.json.gz *.gz)"


def profile_overlay(result: Attribution) -> Overlay:
    """The run-time overlay of a trace's per-node times, its Details rows and its notes (runs, unattributed)."""
    overlay = run_time_overlay({n.node: n.us / 1e6 for n in result.nodes if n.us > 0})
    overlay.name = PROFILE_TIME
    for n in result.nodes:
        rows = [("calls", str(n.calls)), ("total", format_seconds(n.us / 1e6)),
                ("mean", format_seconds(n.mean_us / 1e6)), ("device", n.device)]
        rows += [("event", f"{e.name}: {format_seconds(e.dur / 1e6)}") for e in n.events[:EVENTS_LISTED]]
        if len(n.events) > EVENTS_LISTED:
            rows.append(("event", f"… {len(n.events) - EVENTS_LISTED} more"))
        overlay.rows[n.node] = rows
    runs = "run" if result.calls == 1 else "runs"
    overlay.notes = [f"{result.calls} {runs} on {result.device}",
                     f"{format_seconds(result.unattributed_us / 1e6)} unattributed"]
    return overlay


def read_profile(program: Program, path: str) -> Overlay:
    """The overlay of the trace at `path` on `program`; ProfileError in one line when it cannot be used."""
    return profile_overlay(attribute(program, read_trace(path), program_label=program.name))


def status_line(path: str, overlay: Overlay) -> str:
    return f"Profile {Path(path).name}: {len(overlay.values)} nodes timed ({'; '.join(overlay.notes)})"
