"""AOTInductor op by op, on a real package (tests/aoti_package.py `traced_package`: compiled by this machine's torch
with provenance tracking, kernel profiling and saved intermediate values): a package of compiled code alone runs on
inputs made from its wrapper's input checks; `--node-times` times each kernel and puts it on the nodes torch's
provenance names; `numerics --candidate PACKAGE.pt2` compares each kernel's output at the node that carries it out;
the device is a parameter of the job."""
from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.jobs.schemas.run import RunRequest, RunResult
from pt2_viewer.core.pt2.aoti import aoti_models
from pt2_viewer.core.pt2.aoti_inputs import choose_sizes
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.run import aoti_job
from tests.aoti_package import traced_package


@pytest.fixture(scope="module")
def traced() -> tuple[Path, Path]:
    try:
        return traced_package()
    except RuntimeError as e:
        pytest.skip(str(e))


def _provenance(package: Path) -> dict[str, Any]:
    """torch's own record, read straight from the zip: kernel call -> the program nodes it computes."""
    with zipfile.ZipFile(package) as z:
        name = next(n for n in z.namelist() if n.endswith("kernel_information.json"))
        return {k: v["pre_grad_nodes"] for k, v in json.loads(z.read(name)).items()}


def _run(request: dict[str, Any], out: Path) -> dict[str, Any]:
    return aoti_job.run_job(dict(request, allow_native=True, warmup=1, runs=3), out, lambda _e: None)


def test_compiled_code_alone_runs_on_inputs_from_its_wrapper(traced: tuple[Path, Path], tmp_path: Path) -> None:
    source, package = traced
    (model,) = aoti_models(read_archive(package))
    (spec,) = model.input_specs
    assert spec.dtype == "float32" and spec.device == "cpu" and spec.dims[1].size == 4
    batch = spec.dims[0]
    assert (batch.size, batch.low, batch.high) == (None, 2, 64)  # export's Dim("batch", min=2, max=64)
    result = _run({"program": str(package)}, tmp_path / "a")
    assert result["ok"], result.get("error")
    assert result["inputs"]["source"] == "wrapper" and result["inputs"]["sizes"] == {batch.symbol: 2}
    assert "input checks" in result["inputs"]["note"] and "in [2, 64]" in result["inputs"]["note"]
    assert [o["shape"] for o in result["outputs"]] == [[2, 3], [2]]
    asked = _run({"program": str(package), "dims": {f"{spec.name}.shape[0]": 5}}, tmp_path / "b")
    assert [o["shape"] for o in asked["outputs"]] == [[5, 3], [5]]
    # the same inputs through the source program give the same outputs
    ep = torch.export.load(str(source))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    assert asked["outputs"][1]["mean"] == pytest.approx(float(ep.module()(x)[1].mean()), rel=1e-5)
    outside = _run({"program": str(package), "dims": {batch.symbol: 65}}, tmp_path / "c")
    assert outside["ok"] is False and outside["error"]["kind"] == "input" and "[2, 64]" in outside["error"]["message"]


def test_node_times_time_each_kernel_on_the_nodes_provenance_names(traced: tuple[Path, Path], tmp_path: Path
                                                                   ) -> None:
    source, package = traced
    result = _run({"program": str(package), "node_times": True}, tmp_path)
    assert result["ok"], result.get("error")
    provenance = _provenance(package)
    kernels = {k["handle"]: k for k in result["kernel_times"]}
    assert set(kernels) == set(provenance)  # every kernel call timed, named by torch's provenance key
    for handle, k in kernels.items():
        assert k["nodes"] == provenance[handle] and k["seconds"] > 0
    fused = next(k for k in kernels.values() if len(k["nodes"]) > 1)
    assert {"relu", "mul", "add"} <= set(fused["nodes"])
    program_nodes = {n.name for n in read_archive(source).program().graph.nodes}
    assert set(result["node_times"]) <= program_nodes and "linear" in result["node_times"]
    # a fused kernel's time is shared over its group: the nodes' sum is the kernels' sum
    assert sum(result["node_times"].values()) == pytest.approx(
        sum(k["seconds"] for k in kernels.values() if k["nodes"]), rel=1e-6)
    assert result["hottest"][0]["node"] == next(iter(result["node_times"]))


def test_numerics_compares_each_kernel_where_its_value_leaves_the_group(traced: tuple[Path, Path], tmp_path: Path
                                                                       ) -> None:
    from pt2_viewer.core.numerics.job import run_job

    source, package = traced
    result = run_job({"program": str(source), "candidate": str(package), "allow_native": True}, tmp_path,
                     lambda _e: None)
    assert result["ok"], result.get("error")
    assert result["per_node"] is True and result["kind"] == "package" and "provenance" in result["note"]
    rows = {r["node"]: r for r in result["nodes"]}
    provenance = _provenance(package)
    fused = next(nodes for nodes in provenance.values() if "relu" in nodes)
    # the fused kernel's two values leave its group at add (y * 2 + 1) and sum_1; relu and mul stay inside it
    assert {"add", "sum_1", "linear"} <= set(rows) and not {"relu", "mul"} & set(rows)
    for node in ("add", "sum_1"):
        assert rows[node]["group"] == fused and rows[node]["kernel"] in provenance
        assert rows[node]["candidate"].startswith("cpp_fused_") and rows[node]["error"] < 1e-5
    assert rows["linear"]["group"] == ["linear"]
    assert result["first_divergence"] is None and "relu" in result["not_compared"]


def test_the_device_is_a_parameter(traced: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU package refuses CUDA with the reason; a CUDA package refuses the CPU, and runs on cuda:N only where the
    worker has a GPU; the device index reaches torch's loader."""
    _, package = traced
    (model,) = aoti_models(read_archive(package))
    report = RunResult(ok=False, cuda_available=False, cuda_unavailable_reason="no GPU here")
    assert aoti_job.package_device("cpu", model, report) == "cpu"
    with pytest.raises(JobFailure, match="compiled for cpu"):
        aoti_job.package_device("cuda", model, report)
    cuda_model = type(model)(**{**model.__dict__, "device": "cuda"})
    with pytest.raises(JobFailure, match="compiled for cuda"):
        aoti_job.package_device("cpu", cuda_model, report)
    with pytest.raises(JobFailure, match="not available: no GPU here"):
        aoti_job.package_device("cuda:1", cuda_model, report)
    assert aoti_job.package_device("cuda:1", cuda_model, replace(report, cuda_available=True)) == "cuda:1"
    seen: list[int] = []
    monkeypatch.setattr(torch._inductor, "aoti_load_package", lambda path, **kw: seen.append(kw["device_index"]))
    aoti_job.load_package(package, RunRequest(allow_native=True), device="cuda:1")
    aoti_job.load_package(package, RunRequest(allow_native=True))
    assert seen == [1, -1]
    with pytest.raises(ValueError, match="not a dynamic dim"):
        choose_sizes(model.input_specs, {"nope": 3})


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_cuda_package_runs_and_times_its_kernels_on_the_gpu(traced: tuple[Path, Path], tmp_path: Path) -> None:
    source, _ = traced
    package = tmp_path / "small.cuda.aoti.pt2"
    ep = torch.export.load(str(source))
    from torch.export.passes import move_to_device_pass

    torch._inductor.aoti_compile_and_package(move_to_device_pass(ep, "cuda"), package_path=str(package),
                                             inductor_configs={"trace.provenance_tracking_level": 1})
    result = _run({"program": str(package), "device": "cuda", "node_times": True}, tmp_path / "run")
    assert result["ok"], result.get("error")
    assert result["device"] == "cuda" and result["outputs"][0]["device"].startswith("cuda")
    assert result["kernel_times"] and set(result["node_times"]) <= {n.name for n in ep.graph.nodes}


@pytest.mark.slow
def test_a_zoo_transformer_is_compared_kernel_by_kernel(tmp_path: Path) -> None:
    """`numerics nn_transformer.pt2 --candidate aoti` end to end: built in the job with provenance and saved values
    (minutes on a small CPU); every compared row is a kernel torch's provenance maps to that node's group, and an
    attention's input preparation, which torch lists with the attention, is never taken for the attention."""
    from pt2_viewer.core.numerics.job import run_job
    from tests.zoo.cache import program_by_id, zoo_path

    source = zoo_path(program_by_id("nn_transformer"))
    result = run_job({"program": str(source), "candidate": "aoti"}, tmp_path, lambda _e: None)
    assert result["ok"], result.get("error")
    assert result["per_node"] is True and result["compared"] >= 40 and result["first_divergence"] is None
    provenance = _provenance(tmp_path / "model.aoti.pt2")
    for row in result["nodes"]:
        assert row["node"] in provenance[row["kernel"]] and row["group"] == provenance[row["kernel"]]
        assert row["error"] < 1e-4
    assert not any(r["node"].startswith("scaled_dot_product_attention") and r["kernel"].startswith("cpp_fused")
                   for r in result["nodes"])
    # the same package, profiled: every kernel timed, its time on the nodes provenance names
    timed = _run({"program": str(tmp_path / "model.aoti.pt2"), "source": str(source), "node_times": True,
                  "allow_native": True}, tmp_path / "run")
    assert timed["ok"], timed.get("error")
    assert {k["handle"] for k in timed["kernel_times"]} == set(provenance)
    nodes = {n.name for n in read_archive(source).program().graph.nodes}
    assert set(timed["node_times"]) <= nodes and any(n.startswith("scaled_dot_product") for n in timed["node_times"])


def test_the_wrapper_readers_take_any_text(traced: tuple[Path, Path]) -> None:
    """The input checks and kernel calls are read from a file the user only opened: cut or garbled, it gives fewer
    facts, never an exception."""
    import random

    from pt2_viewer.core.pt2.aoti import kernel_calls
    from pt2_viewer.core.pt2.aoti_inputs import input_checks

    _, package = traced
    with zipfile.ZipFile(package) as z:
        text = z.read(next(n for n in z.namelist() if n.endswith(".wrapper.cpp"))).decode()
    rng = random.Random(0)
    for _ in range(40):
        a, b = sorted(rng.randrange(len(text)) for _ in range(2))
        garbled = text[:a] + text[b:] if rng.random() < 0.5 else text[:a] + "}\n -1 != x_size[9]) {" + text[a:]
        for spec in input_checks(garbled):
            try:
                choose_sizes([spec])
            except ValueError as e:  # a range torch would refuse too: the job's `input` failure says it
                assert "range" in str(e)
        kernel_calls(garbled, "w", {"cpp_fused_0:1": ("x",)})
