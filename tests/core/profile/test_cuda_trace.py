"""CUDA kernels attributed through their launching op, on a CUDA trace synthesized from the trace format.

Synthesized from the trace format; replace with a recorded one on a GPU machine. This project's test machines have
no GPU: the trace here is the zoo CNN's real eager CPU profile (tests/profile_programs.py) with what Kineto adds on
CUDA written in, as torch.profiler writes it: a `cuda_runtime` `cudaLaunchKernel` inside each launching op on the
op's thread, and a `kernel` event on the device's stream (pid 0, tid 7) whose `args.correlation` is the launch's (and,
for every other kernel, whose `args["External id"]` is the launching op's). Besides: one kernel found only by its
External id (no launch recorded: the inner op `aten::mkldnn_convolution` of the first conv), and one kernel no op
launched."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.formats import registry
from pt2_viewer.core.profile.attribute import attribute
from pt2_viewer.core.profile.trace_file import read_trace
from tests.profile_programs import profile_of, program_path

pytestmark = pytest.mark.zoo  # the zoo's programs and their profiles (tests/profile_programs.py)

VIEW_OPS = {"aten::flatten"}  # ops that launch no kernel
ORPHAN_US = 77.0


def _top_level_ops(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ops = sorted((e for e in events if e.get("cat") == "cpu_op"), key=lambda e: (e["ts"], -e["dur"]))
    tops, end = [], float("-inf")
    for e in ops:
        if e["ts"] >= end:
            tops.append(e)
            end = e["ts"] + e["dur"]
    return tops


def _synthesized_cuda_trace(tmp_path: Path) -> tuple[Path, dict[int, float]]:
    """The trace, and the kernel time each top-level op (by its position) launched."""
    trace = json.loads((profile_of("resnet18") / "trace.json").read_text(encoding="utf-8"))
    events: list[dict[str, Any]] = trace["traceEvents"]
    added: list[dict[str, Any]] = []
    expected: dict[int, float] = defaultdict(float)
    correlation = 1000
    for position, op in enumerate(_top_level_ops(events)):
        if op["name"] in VIEW_OPS:
            continue
        correlation += 1
        kernel_us = 10.0 + position
        external = op["args"]["External id"]
        added.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": op["pid"],
                      "tid": op["tid"], "ts": op["ts"] + op["dur"] / 2, "dur": 1.0,
                      "args": {"External id": external, "correlation": correlation, "cbid": 211}})
        kernel_args = {"correlation": correlation, "device": 0, "stream": 7}
        if position % 2:  # every other kernel names its op too; the others are found through their launch alone
            kernel_args["External id"] = external
        added.append({"ph": "X", "cat": "kernel", "name": f"kernel_{position}", "pid": 0, "tid": 7,
                      "ts": op["ts"] + op["dur"] / 2 + 5, "dur": kernel_us, "args": kernel_args})
        expected[position] += kernel_us
    inner = next(e for e in events if e.get("name") == "aten::mkldnn_convolution")
    added.append({"ph": "X", "cat": "kernel", "name": "by_external_id", "pid": 0, "tid": 7, "ts": inner["ts"] + 1,
                  "dur": 3.0, "args": {"External id": inner["args"]["External id"], "device": 0}})
    expected[0] += 3.0  # the first conv2d (position 0) encloses the first mkldnn_convolution
    added.append({"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7, "ts": 1.0, "dur": ORPHAN_US,
                  "args": {"correlation": 999_999, "device": 0}})
    trace["traceEvents"] = events + added
    path = tmp_path / "cuda_trace.json"
    path.write_text(json.dumps(trace), encoding="utf-8")
    return path, expected


def test_kernels_go_to_the_node_whose_op_launched_them(tmp_path: Path) -> None:
    path, expected = _synthesized_cuda_trace(tmp_path)
    result = attribute(registry.read(program_path("resnet18")).program(), read_trace(path))
    assert result.device == "cuda:0" and result.calls == 1
    assert result.unattributed_us == pytest.approx(ORPHAN_US)
    for position, node in enumerate(result.nodes):
        assert node.us == pytest.approx(expected.get(position, 0.0)), node.node
        assert node.device == ("cuda:0" if position in expected else "cpu"), node.node
        assert all(e.category == "kernel" for e in node.events)
    assert result.nodes[0].node == "conv2d" and {e.name for e in result.nodes[0].events} == {"kernel_0",
                                                                                           "by_external_id"}
