"""Running what a program became, in the worker: an ExecuTorch `.pte` with ExecuTorch's runtime, an AOTInductor
package with `aoti_load_package` after its own consent; `run FILE.pte --device cpu --json` prints what `run` prints
for a `.pt2`, and `numerics SOURCE.pt2 --candidate FILE.pte|PACKAGE.pt2` compares the outputs with the source's."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.run import aoti_job, pte_job
from tests.programs import ExportFailed

pytest.importorskip("executorch", reason="executorch builds and runs the .pte test files (requirements-dev.txt)")


def _file(build: Any, *args: Any) -> Path:
    try:
        return build(*args)
    except ExportFailed as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def files() -> dict[str, Path]:
    from tests.zoo import pipeline

    return {"source": _file(pipeline.small_pt2), "portable": _file(pipeline.small_pte, "portable"),
            "xnnpack": _file(pipeline.small_pte, "xnnpack"), "aoti": _file(pipeline.aoti_path, False),
            "aoti_program": _file(pipeline.aoti_path, True)}


def _job(run: Any, request: dict[str, Any], tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    return run(dict(request, warmup=1, runs=3), tmp_path, events.append), events


def _cli(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "pt2_viewer", *args, "--json", "-q"], capture_output=True, text=True,
                          timeout=600)
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def test_run_pte_prints_the_run_report(files: dict[str, Path]) -> None:
    """Inputs made from the method's own metadata; the report has the run job's shape and ExecuTorch's outputs."""
    import torch
    from executorch.runtime import Runtime

    result = _cli("run", str(files["xnnpack"]), "--device", "cpu")
    assert result["ok"] is True and result["device"] == "cpu" and result["program_name"] == "forward"
    assert result["inputs"]["source"] == "generated"
    assert [o["shape"] for o in result["outputs"]] == [[2, 4]] and result["latency"]["runs"] == 10
    expected = Runtime.get().load_program(files["xnnpack"]).load_method("forward").execute(
        pte_job.made_inputs(files["xnnpack"], "forward", 0))[0]
    assert result["outputs"][0]["max"] == pytest.approx(float(expected.max()), rel=1e-6)
    assert isinstance(expected, torch.Tensor)


def test_run_pte_on_the_source_inputs_matches_the_source(files: dict[str, Path], tmp_path: Path) -> None:
    source, _ = _job(pte_job.run_job, {"program": str(files["source"])}, tmp_path / "s")
    from pt2_viewer.core.run.job import run_job as run_program

    reference, _ = _job(run_program, {"program": str(files["source"])}, tmp_path / "r")
    for kind in ("portable", "xnnpack"):
        result, events = _job(pte_job.run_job, {"program": str(files[kind]), "source": str(files["source"])},
                              tmp_path / kind)
        assert result["ok"] is True, result
        assert result["inputs"]["source"] == reference["inputs"]["source"]
        ours, theirs = result["outputs"][0], reference["outputs"][0]
        assert ours["shape"] == theirs["shape"]
        assert ours["mean"] == pytest.approx(theirs["mean"], rel=1e-4, abs=1e-6)
        assert {"load", "run", "done"} <= {e["stage"] for e in events if e["type"] == "progress"}
    assert source["ok"] is False  # a .pt2 is not a .pte: the job says so instead of crashing
    assert "ExecuTorch" in source["error"]["message"]


def test_without_executorch_it_says_what_to_install(files: dict[str, Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "executorch.runtime", None)  # an import of it fails, as on a Python without it
    result, _ = _job(pte_job.run_job, {"program": str(files["portable"])}, tmp_path)
    assert result["ok"] is False and result["error"]["kind"] == "missing_module"
    assert "pip install executorch" in result["error"]["hint"] and "ET12" in result["error"]["hint"]


def test_an_aoti_package_runs_only_after_consent(files: dict[str, Path], tmp_path: Path) -> None:
    request = {"program": str(files["aoti"]), "source": str(files["source"])}
    refused, _ = _job(aoti_job.run_job, request, tmp_path / "no")
    assert refused["ok"] is False and refused["error"]["kind"] == "untrusted_native"
    assert "outputs" not in refused
    ran, _ = _job(aoti_job.run_job, dict(request, allow_native=True), tmp_path / "yes")
    assert ran["ok"] is True and ran["inputs"]["source"] == "sample"
    from pt2_viewer.core.run.job import run_job as run_program

    reference, _ = _job(run_program, {"program": str(files["source"])}, tmp_path / "ref")
    assert ran["outputs"][0]["mean"] == pytest.approx(reference["outputs"][0]["mean"], rel=1e-5)
    alone, _ = _job(aoti_job.run_job, {"program": str(files["aoti"]), "allow_native": True}, tmp_path / "alone")
    assert alone["ok"] is True and alone["inputs"]["source"] == "wrapper"  # made from the wrapper's input checks
    both, _ = _job(aoti_job.run_job, {"program": str(files["aoti_program"]), "allow_native": True}, tmp_path / "b")
    assert both["ok"] is True  # the package's own program gives the inputs


def test_the_cli_picks_the_job_by_file(files: dict[str, Path]) -> None:
    from pt2_viewer.core.run.dispatch import run_job_for

    assert run_job_for(files["portable"]) == "run_pte"
    assert run_job_for(files["aoti"]) == "run_aoti"
    assert run_job_for(files["aoti_program"]) == "run_program"
    assert run_job_for(files["aoti_program"], compiled=True) == "run_aoti"
    assert run_job_for(files["source"]) == "run_program"


@pytest.mark.parametrize("candidate", ["xnnpack", "aoti"])
def test_numerics_compares_with_the_source(files: dict[str, Path], candidate: str) -> None:
    result = _cli("numerics", str(files["source"]), "--candidate", str(files[candidate]), "--allow-native")
    assert result["ok"] is True and result["first_divergence"] is None
    assert result["kind"] == ("pte" if candidate == "xnnpack" else "package")
    if candidate == "xnnpack":  # op by op, through a fresh lowering's ETRecord (tests/core/deploy/ for the mapping)
        assert result["per_node"] is True and result["compared"] >= 1 and "fresh xnnpack" in result["compared_program"]
    else:
        assert result["per_node"] is False and result["compared"] == 1
