"""A torch.compile run on CUDA, attributed by kernel name through Inductor's provenance, on a trace synthesized from
the trace format.

Synthesized from the trace format; replace with a recorded one on a GPU machine. This project's test machines have
no GPU: the trace here is the zoo CNN's real compiled CPU profile and its TORCH_TRACE's real provenance
(tests/compiled_profile_programs.py) with what differs on CUDA written in, as torch.profiler and Inductor write it:
each generated kernel is a Triton kernel (`triton_poi_fused_*`, the provenance's `cpp_fused_*` keys renamed so), it
records no `cpu_op` of its own with the graph's id before its name, but a `cudaLaunchKernel` on the launching thread
and a `kernel` event on the device's stream (pid 0, tid 7) carrying the launch's correlation id. The CPU run's
attribution is the referee: each Triton kernel's time goes to the nodes its `cpp_fused_*` twin's went to."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.model.program import Program
from pt2_viewer.core.profile.load import profile_attribution
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.trace import provenance
from pt2_viewer.core.trace.reader import read_trace
from tests.compiled_profile_programs import compiled_profile
from tests.core.profile.test_compiled_profile import _log_with_mappings
from tests.profile_programs import program_path

pytestmark = pytest.mark.zoo  # the zoo's CNN (tests/zoo) and its compiled profiles

_CPP = re.compile(r"^graph_\d+_cpp_fused_(\w+)$")
STREAM = 7
EXTERN = {"aten::convolution": "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc",
          "aten::addmm": "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n"}  # cuDNN's and cuBLAS's kernels' names


def _program() -> Program:
    return read_archive(str(program_path("resnet18"))).program(None)


def _cuda_run(folder: Path) -> tuple[Path, Path, float, dict[int, float]]:
    """The synthesized CUDA trace, its TORCH_TRACE (the real provenance, Triton names), its Triton kernels' time and
    the device time of each extern kernel's op (by its position in the CPU trace)."""
    run = compiled_profile() / "provenance"
    real = read_trace(run / "torch_trace").compiles[0].artifact(provenance.NODE_MAPPINGS)
    assert real is not None
    mappings = real.text().replace("cpp_fused_", "triton_poi_fused_")
    torch_trace = _log_with_mappings(folder / "torch_trace", mappings.encode())
    trace = json.loads((run / "trace.json").read_text(encoding="utf-8"))
    events: list[dict[str, Any]] = []
    triton_us = 0.0
    extern = _extern_ops(trace["traceEvents"])
    extern_us: dict[int, float] = {}
    for n, e in enumerate(trace["traceEvents"]):
        kernel = _CPP.match(str(e.get("name", ""))) if e.get("ph") == "X" else None
        if kernel is None:
            events.append(e)
        if kernel is None and n not in extern:
            continue
        correlation = 5000 + n
        name, us = (f"triton_poi_fused_{kernel.group(1)}", e["dur"]) if kernel else (EXTERN[e["name"]], 3.0 + n % 7)
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": e["pid"], "tid": e["tid"],
                       "ts": e["ts"] + min(1.0, e["dur"] / 2), "dur": 0.5,
                       "args": {"correlation": correlation, "cbid": 211}})
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": STREAM, "ts": e["ts"] + 4,
                       "dur": us, "args": {"correlation": correlation, "device": 0, "stream": STREAM}})
        if kernel:
            triton_us += us
        else:
            extern_us[n] = us
    trace["traceEvents"] = events
    path = folder / "cuda_trace.json"
    path.write_text(json.dumps(trace), encoding="utf-8")
    return path, torch_trace, triton_us, extern_us


def _extern_ops(events: list[dict[str, Any]]) -> set[int]:
    """The positions of the extern kernels' ATen ops: directly inside the compiled graph's call (as
    test_compiled_profile's `kernel_time` finds them)."""
    ops = [(n, e) for n, e in enumerate(events) if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    calls = [e for _, e in ops if e["name"].startswith("## Call CompiledFxGraph")]
    out = set()
    for n, e in ops:
        enclosing = [o for _, o in ops if o is not e and o["tid"] == e["tid"] and o["ts"] <= e["ts"]
                     and e["ts"] + e["dur"] <= o["ts"] + o["dur"]]
        parent = min(enclosing, key=lambda o: o["dur"], default=None)
        if e["name"] in EXTERN and parent is not None and parent in calls:
            out.add(n)
    return out


def _by_node(result: Any, prefix: str) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for node in result.nodes:
        for e in node.events:
            if e.name.startswith(prefix):
                out[node.node] += e.dur
    return dict(out)


def test_triton_kernels_on_the_device_go_to_the_nodes_their_provenance_names(tmp_path: Path) -> None:
    trace, torch_trace, triton_us, _ = _cuda_run(tmp_path)
    run = compiled_profile() / "provenance"
    cpu = profile_attribution(_program(), str(run / "trace.json"), str(run / "torch_trace"))
    cuda = profile_attribution(_program(), str(trace), str(torch_trace))
    fused = _by_node(cuda, "triton_poi_fused_")
    assert fused and fused.keys() == _by_node(cpu, "cpp_fused_").keys()
    for node, us in _by_node(cpu, "cpp_fused_").items():  # each kernel's time where its CPU twin's went
        assert fused[node] == pytest.approx(us, rel=1e-9), node
    assert sum(fused.values()) >= 0.9 * triton_us  # the issue's bar, on the generated kernels' device time
    kernels = [e for n in cuda.nodes for e in n.events if e.name.startswith("triton_poi_fused_")]
    assert kernels and all(e.device == 0 and e.category == "kernel" for e in kernels)
    assert cuda.calls == 1  # the kernels on the device's stream and the extern ops on the thread: one run


def test_an_extern_kernels_time_is_its_device_kernels(tmp_path: Path) -> None:
    trace, torch_trace, triton_us, extern_us = _cuda_run(tmp_path)
    cuda = profile_attribution(_program(), str(trace), str(torch_trace))
    assert len(extern_us) == 21  # the 20 convolutions and the linear layer's addmm
    convs = [n for n in cuda.nodes if n.target == "torch.ops.aten.conv2d.default"]
    assert len(convs) == 20
    for n in convs:  # its convolution ran on the device (and a fused kernel of its batch norm may share it)
        (conv,) = [e for e in n.events if e.name.startswith("extern_kernels.convolution:")]
        assert (conv.category, conv.device, n.device) == ("kernel", 0, "cuda:0"), n.node
    externs = sum(e.dur for n in cuda.nodes for e in n.events if e.name.startswith("extern_kernels."))
    assert externs == pytest.approx(sum(extern_us.values()), rel=1e-9)  # the device's time, not the host's
    assert cuda.device == "cuda:0"
    attributed = sum(n.us for n in cuda.nodes)
    assert attributed >= 0.9 * (triton_us + sum(extern_us.values()))
    assert attributed + cuda.unattributed_us == pytest.approx(triton_us + sum(extern_us.values()), rel=1e-9)
