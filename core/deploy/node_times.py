"""Per-op time of a `.pte` from ETDump: each instruction's and each delegate call's time, keyed by the `.pte` graph's
node names (`node_times`), and, with the source program's ETRecord (the one named, beside the file, or a fresh
lowering's: core/deploy/etrecord_choice.py), by the source's nodes (`source_node_times`).

The method runs `runs` times with ETDump on (core/deploy/etdump.py); ExecuTorch's Inspector reads the profile events;
an instruction's time is the least over the runs. ETDump times a delegate call as a whole (the ops inside it are the
backend's, unnamed), so a call's time is shared evenly among the source nodes its debug handles name; an instruction
whose handles name no source node (a memory move) is left out of `source_node_times`, which then sums to less than
`node_times`.

An ETDump recorded elsewhere (`run FILE.pte --etdump RUN.etdp`) gives the same fields from its own runs
(`imported_node_times`), with each node's distribution over them and the events from inside delegates.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.etdump import EVENT_NAMES_SKIPPED, EtdumpRun, inspect, instruction_times, run_with_etdump
from pt2_viewer.core.deploy.etdump_import import (
    check_recorded_program,
    delegate_events,
    instruction_stats,
    read_recording,
)
from pt2_viewer.core.deploy.pte_map import handles_to_nodes, instruction_names, pte_program, reference_handles

HOTTEST = 10
TIMED_RUNS = 3


def _slowest_first(times: dict[str, float]) -> dict[str, float]:
    return dict(sorted(times.items(), key=lambda kv: -kv[1]))


def pte_node_times(pte: Path, method: str, flat_inputs: list[Any], work: Path, etrecord: Any | None = None,
                   buffer_mb: float = 0) -> dict[str, Any]:
    """`node_times` and `hottest` of the run-time overlay, and `source_node_times` when `etrecord` (parsed, of the
    source: core/deploy/etrecord_choice.py) is given. No debug buffer is needed for times (`buffer_mb` 0)."""
    program = pte_program(pte, method)
    run = run_with_etdump(pte, method, flat_inputs, work, buffer_mb, runs=TIMED_RUNS)
    inspector = inspect(run, etrecord)
    by_handle = handles_to_nodes(reference_handles(inspector)) if etrecord is not None else None
    return _report(inspector, program, instruction_times(inspector), by_handle)


def imported_node_times(pte: Path, method: str | None, run: EtdumpRun, etrecord: Any | None) -> dict[str, Any]:
    """What `pte_node_times` gives, from an ETDump recorded elsewhere (core/deploy/etdump_import.py), refused when
    it is not of this method; and what a local run does not: each node's median, p90 and count over the recorded
    runs (`node_time_stats`) and the events delegates logged from inside themselves (`delegate_events`), or which
    delegates logged none (`delegate_events_note`)."""
    program = pte_program(pte, method)
    inspector = read_recording(run, etrecord, values=False)
    check_recorded_program(inspector, program, pte, run.etdump, etrecord is not None)
    stats = instruction_stats(inspector)
    by_handle = handles_to_nodes(reference_handles(inspector)) if etrecord is not None else None
    report = _report(inspector, program, {i: s.least for i, s in stats.items()}, by_handle)
    names = instruction_names(program)
    report["node_time_stats"] = {names.get(i, f"instruction_{i}"): {"median_s": s.median, "p90_s": s.p90,
                                                                     "count": s.count} for i, s in stats.items()}
    events = delegate_events(inspector, program, by_handle)
    report["delegate_events"] = [{"node": e.node, "event": e.event, "backend": e.backend, "median_s": e.times.median,
                                  "p90_s": e.times.p90, "count": e.times.count, "source_nodes": e.source_nodes}
                                 for e in events]
    calls = [n.name for n in program.graph.nodes if str(n.target).startswith("delegate.")]
    silent = [c for c in calls if c not in {e.node for e in events}]
    if silent:
        report["delegate_events_note"] = (
            f"The recording has no events from inside {', '.join(silent[:5])}{', ...' if len(silent) > 5 else ''}: "
            "each is timed as one call (a runtime built with the backend's per-operator profiling logs them).")
    return report


def _report(inspector: Any, program: Any, by_instruction: dict[int, float],
            by_handle: dict[int, list[str]] | None) -> dict[str, Any]:
    """`node_times` and `hottest` by the `.pte` graph's nodes; with the source's nodes by debug handle (from the
    ETRecord), `source_node_times`."""
    names = instruction_names(program)
    times = _slowest_first({names.get(i, f"instruction_{i}"): s for i, s in by_instruction.items()})
    report: dict[str, Any] = {"node_times": times,
                              "hottest": [{"node": n, "seconds": s} for n, s in list(times.items())[:HOTTEST]]}
    if by_handle is None:
        return report
    handles = _instruction_handles(inspector)
    source: dict[str, float] = {}
    for i, seconds in by_instruction.items():
        nodes = list(dict.fromkeys(n for h in handles.get(i, ()) for n in by_handle.get(h, [])))
        for n in nodes:
            source[n] = source.get(n, 0.0) + seconds / len(nodes)
    report["source_node_times"] = _slowest_first(source)
    return report


def _instruction_handles(inspector: Any) -> dict[int, tuple[int, ...]]:
    """Instruction -> the debug handles the ETRecord gives it (resolved by the Inspector on its events)."""
    out: dict[int, tuple[int, ...]] = {}
    for block in inspector.event_blocks:
        if block.name != "Execute":
            continue
        for event in block.events:
            h = event.debug_handles
            if h is None or event.is_delegated_op or event.name in EVENT_NAMES_SKIPPED:
                continue
            out[int(event._instruction_id)] = (h,) if isinstance(h, int) else tuple(h)
    return out
