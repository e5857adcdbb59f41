"""Attribute a profiler trace of the eager program (`ep.module()`) to the program's nodes.

- CPU: on each thread, the top-level op events (core/profile/threads.py) are searched for runs of the program: the
  program's operator calls in graph order (core/profile/program_ops.py), event name for event name. Each run found
  gives each node one call, timed by its event's duration (children included). Top-level ops outside every run are
  `unattributed_us`.
- CUDA (a trace with device events: kernels, memcpy, memset): the times are device times. Each device event goes to
  the op that launched it (the launch's correlation id, else its External id) and from that op to its node; what
  no run's op launched is `unattributed_us`.

A trace in which the program never runs whole is refused, naming where the closest run departs from the program."""
from __future__ import annotations

from pt2_viewer.core.model.program import Program
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import DEVICE_CATEGORIES, Attribution, NodeTime, ProfileTrace, TraceEvent
from pt2_viewer.core.profile.program_ops import ProgramOp, program_ops
from pt2_viewer.core.profile.threads import ThreadOps, thread_ops


def attribute(program: Program, trace: ProfileTrace, program_label: str = "") -> Attribution:
    """Per node times of `program` from `trace`; `ProfileError` when the trace does not record a run of it."""
    ops = program_ops(program)
    threads = thread_ops(trace)
    label = program_label or program.name
    if not threads.top_level:
        raise ProfileError(f"{trace.path}: holds no CPU op events; record it with torch.profiler.profile("
                           "activities=[ProfilerActivity.CPU, ...]) around the program's call")
    names = [op.event_name for op in ops]
    runs: list[list[TraceEvent]] = []
    for events in threads.top_level.values():
        runs.extend(events[i:i + len(ops)] for i in _occurrences([e.name for e in events], names))
    if not runs:
        raise ProfileError(f"{trace.path}: not a run of {label}: {_closest(threads.top_level, ops)}; profile "
                           "ep.module() of this program")
    nodes = {op.node: NodeTime(op.node, op.target) for op in ops}
    node_of: dict[int, NodeTime] = {}  # id of a run's event -> its node
    for run in runs:
        for op, event in zip(ops, run):
            node_of[id(event)] = nodes[op.node]
            nodes[op.node].calls += 1
    kernels = trace.of(DEVICE_CATEGORIES)
    if kernels:
        unattributed = _device_times(kernels, threads, node_of)
        devices = sorted({f"cuda:{k.device}" if k.device is not None else "cuda" for k in kernels})
        device = ", ".join(devices)
    else:
        unattributed = 0.0
        for events in threads.top_level.values():
            for e in events:
                node = node_of.get(id(e))
                if node is None:
                    unattributed += e.dur
                else:
                    node.us += e.dur
                    node.events.append(e)
        device = "cpu"
    return Attribution(label, trace.path, device, len(runs), list(nodes.values()), unattributed)


def _device_times(kernels: list[TraceEvent], threads: ThreadOps, node_of: dict[int, NodeTime]) -> float:
    """Give each device event to its launching op's node; the total of those no node launched."""
    unattributed = 0.0
    for k in kernels:
        op = threads.launcher(k)
        node = node_of.get(id(op)) if op is not None else None
        if node is None:
            unattributed += k.dur
            continue
        node.us += k.dur
        node.device = f"cuda:{k.device}" if k.device is not None else "cuda"
        node.events.append(k)
    return unattributed


def _occurrences(seq: list[str], pattern: list[str]) -> list[int]:
    """Where `pattern` starts in `seq`, runs not overlapping (Knuth-Morris-Pratt: linear in both)."""
    fail = [0] * len(pattern)
    k = 0
    for i in range(1, len(pattern)):
        while k and pattern[i] != pattern[k]:
            k = fail[k - 1]
        if pattern[i] == pattern[k]:
            k += 1
        fail[i] = k
    found: list[int] = []
    k = 0
    for i, name in enumerate(seq):
        while k and name != pattern[k]:
            k = fail[k - 1]
        if name == pattern[k]:
            k += 1
        if k == len(pattern):
            found.append(i - k + 1)
            k = 0
    return found


def _closest(top_level: dict[tuple[str, str], list[TraceEvent]], ops: list[ProgramOp]) -> str:
    """Where the longest partial run of the program in the trace departs from it, in words."""
    best, found = 0, ""
    for events in top_level.values():
        names = [e.name for e in events]
        for start in (i for i, n in enumerate(names) if n == ops[0].event_name):
            k = 0
            while k < len(ops) and start + k < len(names) and names[start + k] == ops[k].event_name:
                k += 1
            if k > best:
                best = k
                found = names[start + k] if start + k < len(names) else "the end of the thread"
            if best == len(ops) - 1:
                break
    if best == 0:
        return (f"its ops never begin as the program does ({ops[0].event_name} at node {ops[0].node}, then "
                f"{len(ops) - 1} more)")
    op = ops[best]
    return (f"the closest run matches {best} of the program's {len(ops)} ops, then the program calls "
            f"{op.event_name} (node {op.node}) where the trace has {found}")
