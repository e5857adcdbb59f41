"""Which op each event of a trace belongs to: the top-level ops of each CPU thread (a CPU op no other CPU op on its
thread encloses), and for each launch and CPU op the top-level op it ran inside, so that a kernel found through its
correlation id or its External id is given to the op that launched it."""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from pt2_viewer.core.profile.model import (
    CPU_OP_CATEGORIES,
    DEVICE_CATEGORIES,
    RUNTIME_CATEGORIES,
    ProfileTrace,
    TraceEvent,
)


@dataclass
class ThreadOps:
    """The top-level ops of every CPU thread, in time order, and the way from a launch or inner op to them."""

    top_level: dict[tuple[str, str], list[TraceEvent]] = field(default_factory=dict)
    by_correlation: dict[int, TraceEvent] = field(default_factory=dict)  # a launch's correlation -> its top op
    by_external_id: dict[int, TraceEvent] = field(default_factory=dict)  # a CPU op's External id -> its top op

    def launcher(self, kernel: TraceEvent) -> TraceEvent | None:
        """The top-level op that launched `kernel`: through its launch's correlation id, else its External id."""
        if kernel.correlation is not None and kernel.correlation in self.by_correlation:
            return self.by_correlation[kernel.correlation]
        if kernel.external_id is not None:
            return self.by_external_id.get(kernel.external_id)
        return None


def thread_ops(trace: ProfileTrace) -> ThreadOps:
    """Walk each thread's ops and launches in time order with a stack of the ops still open."""
    out = ThreadOps()
    per_thread: dict[tuple[str, str], list[TraceEvent]] = {}
    for e in trace.of(CPU_OP_CATEGORIES | RUNTIME_CATEGORIES):
        per_thread.setdefault(e.thread, []).append(e)
    for thread, events in per_thread.items():
        events.sort(key=lambda e: (e.ts, -e.dur))
        open_ops: list[TraceEvent] = []
        tops: list[TraceEvent] = []
        for e in events:
            while open_ops and e.ts >= open_ops[-1].end:
                open_ops.pop()
            is_op = e.category.lower() in CPU_OP_CATEGORIES
            top = open_ops[0] if open_ops else (e if is_op else None)
            if is_op:
                if not open_ops:
                    tops.append(e)
                open_ops.append(e)
                if e.external_id is not None and top is not None:
                    out.by_external_id[e.external_id] = top
            elif e.correlation is not None and top is not None:
                out.by_correlation[e.correlation] = top
        if tops:
            out.top_level[thread] = tops
    return out


def launched_kernels(trace: ProfileTrace, ops: list[TraceEvent]) -> dict[TraceEvent, list[TraceEvent]]:
    """The device events each of `ops` (CPU ops) launched: the launches on its thread within its time, matched to
    the device events by correlation id. Ops that launched none are left out (a CPU trace: all of them)."""
    by_correlation: dict[int, list[TraceEvent]] = {}
    for k in trace.of(DEVICE_CATEGORIES):
        if k.correlation is not None:
            by_correlation.setdefault(k.correlation, []).append(k)
    if not by_correlation:
        return {}
    launches: dict[tuple[str, str], list[TraceEvent]] = {}
    for e in trace.of(RUNTIME_CATEGORIES):
        if e.correlation in by_correlation:
            launches.setdefault(e.thread, []).append(e)
    for events in launches.values():
        events.sort(key=lambda e: e.ts)
    starts = {thread: [e.ts for e in events] for thread, events in launches.items()}
    out: dict[TraceEvent, list[TraceEvent]] = {}
    for op in ops:
        mine = launches.get(op.thread, [])
        kernels: list[TraceEvent] = []
        for launch in mine[bisect_left(starts.get(op.thread, []), op.ts):]:
            if launch.ts >= op.end:
                break
            kernels += by_correlation[launch.correlation or 0]
        if kernels:
            out[op] = kernels
    return out
