"""Run reports what torch computes (issue 30 §5-6): on programs that change their inputs or buffers in place, with a
sparse output, or with an output type registered without a keys function, Run's output summaries equal those of
torch's own call (`ep.module()` of the freshly loaded program, on copies of the same inputs), the inputs the user
gave are left as they were, and Numerics runs on the custom pytree output. The jobs run in this process."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.numerics.job import run_job as numerics_job
from pt2_viewer.core.run.job import run_job
from pt2_viewer.core.run.readout import output_rows
from pt2_viewer.core.run.tensor_stats import flat_outputs, summarise
from tests.run_programs import CASES, MUTATING, aoti_package_of, run_program_path, torch_answer


def run(name: str, out: Path, **request: Any) -> dict[str, Any]:
    return run_job({"program": str(run_program_path(name)), **request}, out, lambda e: None)


def expected_summaries(name: str) -> list[dict[str, Any]]:
    return [summarise(n, v) for n, v in flat_outputs(torch_answer(run_program_path(name)))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_are_torchs_answer_after_warm_up_and_timed_runs(name: str, tmp_path: Path) -> None:
    result = run(name, tmp_path)  # the defaults: 3 warm-up and 10 timed calls
    assert result["ok"], result.get("error")
    assert result["outputs"] == expected_summaries(name)
    assert result["latency"]["warmup"] == 3 and result["latency"]["runs"] == 10


def test_add_inplace_shows_x_plus_y_not_x_plus_13y(tmp_path: Path) -> None:
    path = run_program_path("add_inplace")
    x, y = torch.export.load(path).example_inputs[0]
    (out,) = run("add_inplace", tmp_path)["outputs"]
    assert out["preview"] == pytest.approx((x + y).reshape(-1)[:8].tolist(), rel=1e-6)
    assert out["max"] == pytest.approx(float((x + y).max()), rel=1e-6)


@pytest.mark.parametrize("name", MUTATING)
def test_the_inputs_summarised_are_those_given_and_a_second_run_gives_the_same(name: str, tmp_path: Path) -> None:
    first, second = run(name, tmp_path), run(name, tmp_path, warmup=1, runs=2)
    assert first["ok"] and second["ok"], (first.get("error"), second.get("error"))
    assert first["inputs"] == second["inputs"]
    assert first["outputs"] == second["outputs"]


def test_resize_does_not_blame_the_users_inputs(tmp_path: Path) -> None:
    result = run("resize_inplace", tmp_path, warmup=2, runs=3, compile=False)
    assert result["ok"], result.get("error")
    assert result["outputs"][0]["shape"] == [5]


def test_a_buffer_updated_in_place_is_restored_for_the_next_job(tmp_path: Path) -> None:
    """A warm worker keeps the loaded program: its cache buffer must not carry the 14 calls of the last job."""
    from pt2_viewer.core.jobs.loading import load_program

    loaded = load_program(str(run_program_path("kv_cache")))
    before = loaded.ep.state_dict["cache"].clone()
    result = run("kv_cache", tmp_path, node_times=True)
    assert result["ok"], result.get("error")
    assert result["outputs"] == expected_summaries("kv_cache")
    assert torch.equal(load_program(str(run_program_path("kv_cache"))).ep.state_dict["cache"], before)


def test_a_sparse_output_is_summarised_with_its_layout(tmp_path: Path) -> None:
    result = run("sparse_output", tmp_path)
    assert result["ok"], result.get("error")
    (out,) = result["outputs"]
    dense = torch_answer(run_program_path("sparse_output")).to_dense()
    assert out["layout"] == "sparse_coo" and out["shape"] == [5, 5]
    assert out["min"] == float(dense.min()) == 0.0  # relu: the implicit zeros count
    assert out["max"] == pytest.approx(float(dense.max()))
    assert out["mean"] == pytest.approx(float(dense.mean()), rel=1e-6)
    (row,) = output_rows(RunResult.from_json(result))
    assert "sparse_coo" in row.dtype


@pytest.mark.parametrize("make", [
    lambda d: d.to_sparse_csr(), lambda d: d.to_sparse_csc(), lambda d: d.to_sparse(),
    lambda d: torch.quantize_per_tensor(d, 0.25, 8, torch.quint8), lambda d: d,
], ids=["csr", "csc", "coo", "quantized", "strided"])
def test_summaries_work_for_every_layout(make: Any) -> None:
    dense = torch.tensor([[0.0, 1.5, 0.0], [-0.5, 0.0, 2.0]])
    s = summarise("out", make(dense))
    assert (s["min"], s["max"], s["nan"]) == (-0.5, 2.0, 0)
    assert s["mean"] == pytest.approx(float(dense.mean()))
    assert s["preview"] == dense.reshape(-1).tolist()
    assert s["layout"] in ("sparse_csr", "sparse_csc", "sparse_coo", "quantized", "strided")


def test_a_pytree_without_keys_names_its_leaves_by_index(tmp_path: Path) -> None:
    result = run("custom_pytree_output", tmp_path)
    assert result["ok"], result.get("error")
    assert [o["name"] for o in result["outputs"]] == ["out[0]", "out[1]['total']", "out[1]['first']"]


def test_numerics_compares_a_pytree_without_keys(tmp_path: Path) -> None:
    result = numerics_job({"program": str(run_program_path("custom_pytree_output")), "candidate": "core"}, tmp_path,
                          lambda e: None)
    assert result["ok"], result.get("error")
    assert result["first_divergence"] is None and result["compared"] > 0


@pytest.mark.slow
def test_an_aoti_package_that_mutates_its_input_shows_torchs_answer(tmp_path: Path) -> None:
    """The .pte and AOTInductor run jobs (core/run/artifact_run.py) show the first call's outputs, not the 14th."""
    from pt2_viewer.core.run import aoti_job

    package = aoti_package_of("add_inplace")
    result = aoti_job.run_job({"program": str(package), "source": str(run_program_path("add_inplace")),
                               "allow_native": True}, tmp_path, lambda e: None)
    assert result["ok"], result.get("error")
    assert result["outputs"] == expected_summaries("add_inplace")
