"""Per-op time of a `.pte` from ETDump: each instruction's and each delegate call's time, keyed by the `.pte` graph's
node names (`node_times`), and, with the source program's ETRecord (the one named, beside the file, or a fresh
lowering's: core/deploy/etrecord_choice.py), by the source's nodes (`source_node_times`).

The method runs `runs` times with ETDump on (core/deploy/etdump.py); ExecuTorch's Inspector reads the profile events;
an instruction's time is the least over the runs. ETDump times a delegate call as a whole (the ops inside it are the
backend's, unnamed), so a call's time is shared evenly among the source nodes its debug handles name; an instruction
whose handles name no source node (a memory move) is left out of `source_node_times`, which then sums to less than
`node_times`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.etdump import EVENT_NAMES_SKIPPED, inspect, instruction_times, run_with_etdump
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
    by_instruction = instruction_times(inspector)
    names = instruction_names(program)
    times = _slowest_first({names.get(i, f"instruction_{i}"): s for i, s in by_instruction.items()})
    report: dict[str, Any] = {"node_times": times,
                              "hottest": [{"node": n, "seconds": s} for n, s in list(times.items())[:HOTTEST]]}
    if etrecord is None:
        return report
    by_handle = handles_to_nodes(reference_handles(inspector))
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
