"""Attribute a profiler trace of compiled code (torch.compile's Inductor, an AOTInductor package) to the program's
nodes, by kernel name through torch's provenance (core/trace/provenance.py, core/profile/package_kernels.py).

The trace's kernel events are found by name: a generated kernel as it records itself (`graph_0_cpp_fused_relu_0`
on CPU with `cpp.enable_kernel_profile`, `triton_poi_fused_add_1` on the device), an AOTInductor fallback by its
shim (`aoti_torch_cpu_addmm_out`), an extern kernel as the ATen op it calls (`extern_kernels.convolution` runs
`aten::convolution`, taken only inside a compiled region, where no other op encloses it). Within each compile the
wrapper calls its kernels in the order of their provenance handles, so the events of one name are matched to that
name's calls in that order, wrapping round for the next run; a kernel called at several places (`cpp_fused_relu_2`
twice) gets each call's own nodes. Each event's time is shared equally between the program nodes its call computes
(`cppCodeToPost`, then `postToPre`: Dynamo's node names, which are the program's when the compiled module is its
`ep.module()`; an AOTInductor package's `pre_grad_nodes` are its source program's), so a collapsed group's sum, and
the sum over all nodes, is the kernels' time. Kernel events no provenance names are `unattributed_us`.

On CUDA an extern kernel's ATen op runs on the launching thread and its kernels on the device: the op is matched as
on CPU, and its time is the device time of the kernels it launched (their launches' correlation ids,
core/profile/threads.py `launched_kernels`), as for the Triton kernels beside it."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pt2_viewer.core.model.program import NodeOp, Program
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import (
    CPU_OP_CATEGORIES,
    DEVICE_CATEGORIES,
    Attribution,
    NodeTime,
    ProfileTrace,
    TraceEvent,
)
from pt2_viewer.core.profile.threads import launched_kernels
from pt2_viewer.core.trace.provenance import CompiledKernels

_GRAPH_PREFIX = re.compile(r"^graph_(\d+)_(?=(?:cpp|triton)_)")
_GENERATED = re.compile(r"^(?:graph_\d+_)?(?:cpp|triton)_\w+$")
_COMPILED_REGIONS = ("## Call CompiledFxGraph", "Torch-Compiled Region", "CompiledFunction")
_OP_PREFIX = "aten::"
NO_PROVENANCE = ("holds no inductor_provenance_tracking_node_mappings: compile with "
                 "torch._inductor.config.trace.provenance_tracking_level = 1 (and TORCH_TRACE set) to attribute "
                 "its kernels")


@dataclass(frozen=True)
class _Call:
    event_name: str  # the name its profiler event has, without the graph_N_ prefix
    kernel: str  # as the provenance names it, NAME:HANDLE
    nodes: tuple[str, ...]  # the program nodes it computes


def is_generated_kernel(name: str) -> bool:
    """An event of a kernel Inductor generated (`graph_0_cpp_fused_relu_0`, `triton_poi_fused_add_1`)."""
    return _GENERATED.match(name) is not None


def event_name(kernel: str) -> str:
    """How the profiler names a kernel call: generated kernels by their own name, extern kernels and ATen
    fallbacks by the ATen op (`extern_kernels.addmm` -> `aten::addmm`, `aten.mm.default` -> `aten::mm`)."""
    if kernel.startswith("extern_kernels."):
        return _OP_PREFIX + kernel.removeprefix("extern_kernels.")
    parts = kernel.removeprefix("torch.ops.").split(".")
    if len(parts) >= 2 and parts[0] in ("aten", "prims", "quantized", "_c10d_functional"):
        return f"{parts[0]}::{parts[1]}"
    return kernel


def attribute_compiled(program: Program, trace: ProfileTrace, compiled: list[CompiledKernels], trace_dir: str,
                       program_label: str = "") -> Attribution:
    """Per node times of `program` from the kernel events of `trace`, through the provenance of the run's
    TORCH_TRACE (`compiled`, one entry per compile). `ProfileError` when the trace is not of this program."""
    label = program_label or program.name
    nodes = {n.name: NodeTime(n.name, n.whole_target) for n in program.graph.nodes
             if n.op is NodeOp.CALL_FUNCTION}
    if not compiled:  # the caller says why there is no provenance
        kernel_us = sum(e.dur for e in trace.events if _GENERATED.match(e.name))
        return Attribution(label, trace.path, "cpu", 0, list(nodes.values()), kernel_us)
    same = [_same_nodes(c, nodes) for c in compiled]
    graphs = [_calls(c, program_nodes) for c, program_nodes in zip(compiled, same)]
    named = {n for c in compiled for k in c.kernels for n in k.pre_grad}
    matched = set().union(*same)
    if named and len(matched) < len(named) / 2:
        raise ProfileError(f"{trace_dir}: not a compile of {label}: {len(named) - len(matched)} of the "
                           f"{len(named)} nodes its kernels compute are no node of the program (such as "
                           f"{', '.join(sorted(named - matched)[:3])}); compile the program's ep.module() and give "
                           "that run's TORCH_TRACE")
    found = _match(trace, compiled, graphs)
    if not found.events:
        raise ProfileError(f"{trace.path}: no kernel of the compiled run in {trace_dir} ran in it; profile the "
                           "compiled module of that run, with torch._inductor.config.cpp.enable_kernel_profile = "
                           "True on CPU")
    unattributed = found.unknown_us
    devices: set[str] = set()
    on_device = launched_kernels(trace, [e for e, _ in found.events if e.category.lower() in CPU_OP_CATEGORIES])
    for event, call in found.events:
        launched = on_device.get(event)
        if launched:  # an extern kernel's ATen op on CUDA: the device time of the kernels it launched
            event = replace(event, category=launched[0].category, dur=sum(k.dur for k in launched),
                            device=launched[0].device)
        device = f"cuda:{event.device}" if event.category.lower() in DEVICE_CATEGORIES else "cpu"
        devices.add(device)
        if not call.nodes:
            unattributed += event.dur
            continue
        share = event.dur / len(call.nodes)
        for name in call.nodes:
            node = nodes[name]
            node.calls += 1
            node.us += share
            node.device = device
            node.events.append(TraceEvent(call.kernel, event.category, event.ts, share, event.pid, event.tid,
                                          device=event.device, shared_by=len(call.nodes)))
    notes = [f"{len(found.events)} kernel calls of {len(compiled)} compiled "
             f"graph{'s' if len(compiled) != 1 else ''} matched through provenance"]
    missing = sorted(named - matched)
    if missing:
        notes.append(f"{len(missing)} compiled-graph nodes are not the program's ({', '.join(missing[:3])}"
                     f"{', ...' if len(missing) > 3 else ''})")
    if found.unknown_us:
        notes.append(f"{found.unknown_us / 1000:.3f} ms in kernels the provenance does not name")
    return Attribution(label, trace.path, ", ".join(sorted(devices)) or "cpu", max(found.runs, default=0),
                       list(nodes.values()), unattributed, notes)


def _same_nodes(compiled: CompiledKernels, nodes: dict[str, NodeTime]) -> set[str]:
    """The compile's pre-grad nodes that are the program's: the same name, and the same op where Dynamo's graph
    says which."""
    named = {n for k in compiled.kernels for n in k.pre_grad}
    return {n for n in named if n in nodes
            and compiled.pre_grad_targets.get(n, nodes[n].target) == nodes[n].target}


def _calls(compiled: CompiledKernels, same: set[str]) -> list[_Call]:
    return [_Call(event_name(k.kernel), f"{k.kernel}:{k.handle}" if k.handle is not None else k.kernel,
                  tuple(n for n in k.pre_grad if n in same)) for k in compiled.kernels]


@dataclass
class _Found:
    events: list[tuple[TraceEvent, _Call]]
    host_runs: list[int]  # per compile: how often its calls were matched round on the CPU threads
    unknown_us: float  # generated-kernel events no compile names
    device_runs: list[int] = field(default_factory=list)  # ... on each device stream, at most

    @property
    def runs(self) -> list[int]:
        """Each compile's runs: on CUDA its Triton kernels run round on the device's stream while its extern kernels'
        ops run on the launching thread, in the same runs; a stream's rounds count only for a compile no CPU thread
        ran (all its kernels generated)."""
        return [host or device for host, device in zip(self.host_runs, self.device_runs)]


def _match(trace: ProfileTrace, compiled: list[CompiledKernels], graphs: list[list[_Call]]) -> _Found:
    """Each kernel event with the call it is, per thread in time order."""
    by_id = {c.graph_id: i for i, c in enumerate(compiled) if c.graph_id is not None}
    names = [[c.event_name for c in calls] for calls in graphs]
    having: dict[str, list[int]] = {}
    for g, graph_names in enumerate(names):
        for name in dict.fromkeys(graph_names):
            having.setdefault(name, []).append(g)
    found = _Found([], [0] * len(graphs), 0.0, [0] * len(graphs))
    at: dict[tuple[tuple[str, str], int], int] = {}
    last_graph: dict[tuple[str, str], int] = {}
    for thread, events in _threads(trace).items():
        rounds = [0] * len(graphs)
        open_events: list[TraceEvent] = []
        for e in events:
            while open_events and e.ts >= open_events[-1].end:
                open_events.pop()
            inside_op = any(o.name.startswith(_OP_PREFIX) or _GENERATED.match(o.name) for o in open_events)
            in_region = any(o.name.startswith(_COMPILED_REGIONS) for o in open_events)
            open_events.append(e)
            prefix = _GRAPH_PREFIX.match(e.name)
            name = e.name[prefix.end():] if prefix else e.name
            if inside_op or (name.startswith(_OP_PREFIX) and not in_region):
                continue
            candidates = having.get(name)
            if not candidates:
                if _GENERATED.match(e.name):
                    found.unknown_us += e.dur
                continue
            named = by_id.get(int(prefix.group(1))) if prefix else None
            g = named if named in candidates else _nearest(last_graph.get(thread), candidates)
            last_graph[thread] = g
            start = at.get((thread, g))
            if start is None:  # this thread's first run of the compile
                rounds[g] += 1
                start = 0
            j = next((j for j in range(start, len(names[g])) if names[g][j] == name), None)
            if j is None:  # past the last call of this name: the next run
                rounds[g] += 1
                j = names[g].index(name)
            at[(thread, g)] = j + 1
            found.events.append((e, graphs[g][j]))
        on_device = all(e.category.lower() in DEVICE_CATEGORIES for e in events)
        for g, n in enumerate(rounds):
            if on_device:
                found.device_runs[g] = max(found.device_runs[g], n)
            else:
                found.host_runs[g] += n
    return found


def _nearest(last: int | None, candidates: list[int]) -> int:
    """The compile an event of no graph id belongs to: the one the thread's last kernel ran in, if it has a call of
    that name (an extern kernel between two generated ones), else the first that has."""
    return last if last is not None and last in candidates else candidates[0]


def _threads(trace: ProfileTrace) -> dict[tuple[str, str], list[TraceEvent]]:
    out: dict[tuple[str, str], list[TraceEvent]] = {}
    for e in trace.of(CPU_OP_CATEGORIES | DEVICE_CATEGORIES):
        out.setdefault(e.thread, []).append(e)
    for events in out.values():
        events.sort(key=lambda e: (e.ts, -e.dur))
    return out
