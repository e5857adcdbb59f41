"""An ETDump recorded elsewhere, painted on the window's graphs (View > Overlay > Import ETDump…): the request the
`run_pte` job is given (the one `run FILE.pte --etdump` gives it, so the window and the command line read a recording
the same way, core/deploy/etdump_import.py), and its result as the run-time overlay a local run paints, on the `.pte`
and, where the request named it, on the source program.

What a local run's overlay does not say, the imported one says in Details, node by node: the least, median and p90
times and how many runs the recording holds, and the events a delegate logged from inside itself on its call (on the
source, on the nodes the ETRecord's delegate map names); its legend says how many runs it holds and whether the
delegates logged events from inside, or that they did not."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pt2_viewer.core.graph.overlays import Overlay, run_time_overlay
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.run import DelegateEventTime, RunResult
from pt2_viewer.core.util.words import format_seconds

ETDUMP_TIME = "ETDump time"  # the overlay's name: a local run's own "Run time" stays beside it
JOB = "run_pte"  # the job `run FILE.pte --etdump` runs (core/jobs/kinds.py)
EVENTS_LISTED = 8  # the events inside a delegate Details lists on one node (XNNPACK logs one per operator)
ETDUMP_FILES = "ETDump (*.etdp *.etdump);;All files (*)"
DEBUG_BUFFER_FILES = "Debug buffer (*.bin);;All files (*)"
ETRECORD_FILES = "ETRecord (*.etrecord *.bin);;All files (*)"


@dataclass
class EtdumpFiles:
    """What the user brings: the ETDump, and optionally the debug buffer written with it and the `.pte`'s ETRecord
    (without it the job takes `NAME.etrecord` beside the `.pte`, or lowers the source again where that reproduces
    the file, else refuses)."""

    etdump: str
    debug_buffer: str | None = None
    etrecord: str | None = None


@dataclass
class EtdumpOverlays:
    """The imported times on the `.pte`'s graph and, where the source was named, on the source's."""

    pte: Overlay | None
    source: Overlay | None


def etdump_request(pte: str, files: EtdumpFiles, source: str | None = None) -> ArtifactRunRequest:
    """The `run_pte` request `run PTE --etdump ... [--debug-buffer] [--etrecord] [--source]` makes: nothing runs,
    the recording is read."""
    return ArtifactRunRequest(program=pte, source=source, node_times=True, etdump=files.etdump,
                              debug_buffer=files.debug_buffer or None, etrecord=files.etrecord or None)


def etrecord_beside(pte: str) -> str | None:
    """The ETRecord the job would take without one named (`NAME.etrecord` beside the `.pte`), shown in the dialog."""
    path = Path(pte).with_suffix(".etrecord")
    return str(path) if path.is_file() else None


def _events_by_node(events: Iterable[DelegateEventTime], source: bool) -> dict[str, list[DelegateEventTime]]:
    out: dict[str, list[DelegateEventTime]] = {}
    for e in events:
        for node in (e.source_nodes if source else [e.node]):
            out.setdefault(node, []).append(e)
    return out


def _event_rows(events: list[DelegateEventTime]) -> list[tuple[str, str]]:
    """`event`: `12.3 µs, p90 14.0 µs  Convolution (NHWC, F32) IGEMM #1` (the median first: a long name is cut at its
    end, whole in the row's tooltip), slowest first, at most EVENTS_LISTED."""
    slow = sorted(events, key=lambda e: -e.median_s)
    rows = [("event", f"{format_seconds(e.median_s)}, p90 {format_seconds(e.p90_s)}  {e.event}")
            for e in slow[:EVENTS_LISTED]]
    if len(slow) > EVENTS_LISTED:
        rows.append(("event", f"… {len(slow) - EVENTS_LISTED} more"))
    return rows


def _notes(result: RunResult) -> list[str]:
    stats = result.node_time_stats or {}
    runs = max((s.count for s in stats.values()), default=0)
    notes = [f"{runs} recorded run{'s' if runs != 1 else ''} in {Path(result.etdump or '').name}: the least time "
             "painted, the median and p90 in Details"]
    events = result.delegate_events or []
    if events:
        notes.append(f"{len(events)} events inside delegates, listed on their calls")
    if result.delegate_events_note:
        notes.append(result.delegate_events_note)
    return notes


def etdump_overlays(result: RunResult) -> EtdumpOverlays:
    """The run-time overlay of the recording's least time per node (a local run paints its least too), with each
    node's least, median, p90, runs and the events inside its delegate call in Details, on the `.pte`; on the source,
    its share of each instruction and delegate call (`source_node_times`, as a local run's) with the events the
    ETRecord names its nodes in."""
    notes = _notes(result)
    stats = result.node_time_stats or {}
    events = result.delegate_events or []
    pte = source = None
    if result.node_times:
        pte = run_time_overlay(result.node_times)
        pte.name = ETDUMP_TIME
        inside = _events_by_node(events, source=False)
        for node, least in result.node_times.items():
            s = stats.get(node)
            rows = [("least", format_seconds(least))]
            if s is not None:
                rows += [("median", format_seconds(s.median_s)), ("p90", format_seconds(s.p90_s)),
                         ("runs", str(s.count))]
            pte.rows[node] = rows + _event_rows(inside.get(node, []))
        pte.notes = notes
    if result.source_node_times:
        source = run_time_overlay(result.source_node_times)
        source.name = ETDUMP_TIME
        inside = _events_by_node(events, source=True)
        for node, seconds in result.source_node_times.items():
            source.rows[node] = [("time", format_seconds(seconds)), *_event_rows(inside.get(node, []))]
        delegated = bool(events or result.delegate_events_note)
        source.notes = [notes[0], f"mapped by the ETRecord ({result.etrecord_how or 'given'})" + (
            "; a delegate call's time shared evenly among the source nodes it runs" if delegated else "")]
        if any(e.source_nodes for e in events):
            source.notes.append("the events inside delegates listed on the source nodes they name")
    return EtdumpOverlays(pte, source)


def status_line(result: RunResult) -> str:
    """The status bar's line once a recording is painted."""
    stats = result.node_time_stats or {}
    source = f", {len(result.source_node_times)} source nodes" if result.source_node_times else ""
    if not stats:
        return f"ETDump {Path(result.etdump or '').name}: no instruction timed"
    runs = max(s.count for s in stats.values())
    inside = f", {len(result.delegate_events)} events inside delegates" if result.delegate_events else ""
    return (f"ETDump {Path(result.etdump or '').name}: {len(result.node_times or {})} instructions and delegate "
            f"calls timed{source} over {runs} recorded run{'s' if runs != 1 else ''}{inside}")


__all__ = ["ETDUMP_TIME", "JOB", "EtdumpFiles", "EtdumpOverlays", "etdump_overlays", "etdump_request",
           "etrecord_beside", "status_line"]
