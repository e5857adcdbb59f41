"""Time of each kernel of an AOTInductor package, through `torch.profiler`, and the program nodes each computes.

A kernel shows in the profiler when it records itself: on CPU, packages built with `cpp.enable_kernel_profile`
(generated kernels as `graph_0_cpp_fused_...`, ATen fallbacks as `aoti_torch_cpu_addmm_out`); on CUDA, every kernel
launched (`triton_poi_fused_...`, on the device's timeline). The events of one call are matched to the wrapper's
kernel calls (core/pt2/aoti.py) in order, by name. Each call's nodes come from torch's provenance
(`kernel_information.json`) when the package has it, else from the wrapper's comments or the fused kernel's name.

`node_times` shares each call's time equally between the nodes it computes, so a collapsed group's sum, and the sum of
all nodes, is the kernels' time; `kernel_times` keeps each kernel's whole time with its group.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.pt2.aoti import AotiModel, KernelCall

_PREFIX = re.compile(r"^graph_\d+_")
NOT_RECORDED = ("The package's CPU kernels do not record themselves in torch.profiler (it was built without "
                "cpp.enable_kernel_profile), so there are no per-kernel times: build it with "
                "torch._inductor.aoti_compile_and_package(ep, inductor_configs={'cpp.enable_kernel_profile': True}).")


@dataclass
class KernelTime:
    kernel: str
    handle: str  # torch's provenance key (NAME:N), or ""
    line: int  # the call's line in the wrapper
    seconds: float  # the least over the profiled runs
    nodes: list[str]  # the program nodes it computes

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "handle": self.handle, "line": self.line, "seconds": self.seconds,
                "nodes": self.nodes}


def match_events(calls: list[KernelCall], events: list[tuple[str, float]]) -> dict[int, float]:
    """Seconds per call index: each event (name, seconds), in the order they ran, goes to the next call of that name;
    events of no call (ATen ops inside a fallback, the profiler's own) are left out."""
    names = [k.kernel.removeprefix("call_") for k in calls]
    out: dict[int, float] = {}
    at = 0
    for name, seconds in events:
        name = _PREFIX.sub("", name)
        j = next((j for j in range(at, len(names)) if names[j] == name), None)
        if j is None:
            continue
        out[j] = out.get(j, 0.0) + seconds
        at = j + 1
    return out


def _events(prof: Any, device: str) -> list[tuple[str, float]]:
    """(name, seconds) of the kernels the profiler saw, in the order they started."""
    from torch.autograd import DeviceType

    if device.startswith("cuda"):
        picked = [e for e in prof.events() if getattr(e, "device_type", None) == DeviceType.CUDA]
        return [(e.name, float(getattr(e, "device_time_total", 0.0)) * 1e-6)
                for e in sorted(picked, key=lambda e: e.time_range.start)]
    top = [e for e in prof.events() if e.cpu_parent is None]
    return [(e.name, float(e.cpu_time_total) * 1e-6) for e in sorted(top, key=lambda e: e.time_range.start)]


def kernel_times(call: Callable[[], Any], model: AotiModel, device: str, runs: int = 3
                 ) -> tuple[list[KernelTime], dict[str, float], str]:
    """Profile `runs` calls: (kernels slowest first, node_times slowest first, a note when nothing could be timed)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    best: dict[int, float] = {}
    for _ in range(max(runs, 1)):
        with profile(activities=activities) as prof:
            call()
            if device.startswith("cuda"):
                import torch

                torch.cuda.synchronize()
        for j, seconds in match_events(model.kernels, _events(prof, device)).items():
            best[j] = min(best.get(j, seconds), seconds)
    kernels = [KernelTime(k.kernel, k.handle, k.line, best[j], list(k.source_nodes))
               for j, k in enumerate(model.kernels) if j in best]
    note = "" if kernels else (NOT_RECORDED if not model.profiled else
                               "The profiler recorded none of the package's kernel calls.")
    return sorted(kernels, key=lambda k: -k.seconds), node_times_of(kernels), note


def node_times_of(kernels: list[KernelTime]) -> dict[str, float]:
    """Each kernel's time shared equally between the nodes it computes; slowest first."""
    times: dict[str, float] = {}
    for k in kernels:
        for node in k.nodes:
            times[node] = times.get(node, 0.0) + k.seconds / len(k.nodes)
    return dict(sorted(times.items(), key=lambda kv: -kv[1]))
