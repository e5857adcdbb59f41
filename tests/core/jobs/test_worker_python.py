"""The Python that runs torch jobs (core/jobs/python_env.py): PT2V_WORKER_PYTHON beats the Preferences choice,
which beats the default; a Python without torch is named, with what to do, by the probe and by a real job; the probe
says what a real Python has; and a program exported from a real HuggingFace model runs and decomposes through the
worker, which imports transformers for its output types."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from pt2_viewer.core.jobs import protocol, python_env
from pt2_viewer.core.jobs.client import WorkerJob, run_job
from pt2_viewer.core.jobs.python_env import FROM_DEFAULT, FROM_ENV, FROM_PREFERENCES, WORKER_PYTHON_ENV
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)
from tests.pythons import python_without_torch  # noqa: F401  (a fixture)

JOB_TIMEOUT_S = 240


@pytest.fixture(autouse=True)
def no_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with neither the variable nor a Preferences choice."""
    monkeypatch.delenv(WORKER_PYTHON_ENV, raising=False)
    monkeypatch.setattr(python_env, "_preferred", None)


def test_environment_beats_preferences_beats_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert python_env.choose_worker_python() == python_env.WorkerPython(sys.executable, FROM_DEFAULT)
    python_env.set_preferred("/opt/conda/bin/python")
    assert python_env.choose_worker_python() == python_env.WorkerPython("/opt/conda/bin/python", FROM_PREFERENCES)
    monkeypatch.setenv(WORKER_PYTHON_ENV, "/srv/cuda-env/bin/python")
    chosen = python_env.choose_worker_python()
    assert chosen == python_env.WorkerPython("/srv/cuda-env/bin/python", FROM_ENV)
    assert WORKER_PYTHON_ENV in chosen.describe()
    assert WorkerJob(JobSpec("run_program", {}, tmp_path)).command()[0] == "/srv/cuda-env/bin/python"
    monkeypatch.setenv(WORKER_PYTHON_ENV, "  ")  # set but empty: not a choice
    assert python_env.choose_worker_python().source == FROM_PREFERENCES
    python_env.set_preferred("")
    assert python_env.choose_worker_python().source == FROM_DEFAULT


def test_in_a_bundle_the_default_is_python3_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "_internal"), raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert python_env.choose_worker_python() == python_env.WorkerPython(str(bin_dir / "python3"), FROM_DEFAULT)
    env = python_env.worker_environment({"LD_LIBRARY_PATH": "/b/_internal", "LD_LIBRARY_PATH_ORIG": "/usr/lib/x"})
    assert env["LD_LIBRARY_PATH"] == "/usr/lib/x" and "LD_LIBRARY_PATH_ORIG" not in env
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(tmp_path / "_internal" / "pysrc")


def test_probe_says_what_a_python_has() -> None:
    import transformers

    probe = python_env.probe_python(sys.executable)
    assert probe.ok and probe.error is None
    assert probe.torch_version == torch.__version__ and probe.torch_cuda == torch.version.cuda
    assert len(probe.cuda_devices) == torch.cuda.device_count()
    assert probe.transformers_version == transformers.__version__
    lines = probe.summary_lines()
    assert f"torch {torch.__version__}" in lines and f"transformers {transformers.__version__}" in lines


def test_a_python_without_torch_is_named_with_the_fix(python_without_torch: Path,  # noqa: F811
                                                      pt2_path: Callable[[str], Path],
                                                      monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    probe = python_env.probe_python(str(python_without_torch))
    assert not probe.ok and probe.python_version and probe.torch_version is None
    assert f"{python_without_torch}, has no torch" in (probe.error or "")
    assert "File > Preferences" in probe.error and WORKER_PYTHON_ENV in probe.error  # type: ignore[operator]

    python_env.set_preferred(sys.executable)
    monkeypatch.setenv(WORKER_PYTHON_ENV, str(python_without_torch))  # the variable wins over Preferences
    request = {"program": str(pt2_path("tutorial_mixed")), "runs": 1, "warmup": 0}
    _, outcome = run_job("run_program", request, tmp_path / "a", timeout_s=JOB_TIMEOUT_S)
    assert outcome.status == protocol.FAILED
    assert f"{python_without_torch}, has no torch" in outcome.message and WORKER_PYTHON_ENV in outcome.message
    assert "Traceback" not in outcome.message

    missing = tmp_path / "no-such" / "python"
    monkeypatch.setenv(WORKER_PYTHON_ENV, str(missing))
    _, outcome = run_job("run_program", request, tmp_path / "b", timeout_s=JOB_TIMEOUT_S)
    assert outcome.status == protocol.START_FAILED
    assert str(missing) in outcome.message and WORKER_PYTHON_ENV in outcome.message
    assert "does not exist" in (python_env.probe_python(str(missing)).error or "")


def test_a_huggingface_program_runs_and_decomposes_through_the_worker(pt2_path: Callable[[str], Path],
                                                                      tmp_path: Path) -> None:
    import torch.utils._pytree as pytree
    import transformers.modeling_outputs

    path = pt2_path("hf_tiny_bert")
    # no trust asked: the module its output type names belongs to transformers, a library the import policy allows
    # (core/jobs/import_policy.py), so the worker imports it by itself
    request = {"program": str(path), "inputs": "sample", "runs": 1, "warmup": 0, "preview": 16}
    _, outcome = run_job("run_program", request, tmp_path / "run", timeout_s=JOB_TIMEOUT_S)
    assert outcome.ok, outcome.message
    result = outcome.result
    assert result["ok"], result.get("error")
    assert "transformers.modeling_outputs" in result["imported"]  # the worker imported the output type's module
    assert [d["status"] for d in result["imports"]] == ["allowed"]
    ep = torch.export.load(path)
    with torch.no_grad():
        expected = ep.module()(*ep.example_inputs[0], **ep.example_inputs[1])
    assert isinstance(expected, transformers.modeling_outputs.BaseModelOutputWithPoolingAndCrossAttentions)
    leaves = pytree.tree_leaves(expected)
    assert [o["shape"] for o in result["outputs"]] == [list(t.shape) for t in leaves] == [[2, 8, 32], [2, 32]]
    assert result["outputs"][0]["name"] == "out['last_hidden_state']"
    assert result["outputs"][0]["preview"] == pytest.approx(leaves[0].reshape(-1)[:16].tolist(), rel=1e-4,
                                                            abs=1e-5)

    generated = dict(request, inputs="generated", dims={"input_ids.shape[1]": 12})
    _, outcome = run_job("run_program", generated, tmp_path / "gen", timeout_s=JOB_TIMEOUT_S)
    assert outcome.ok and outcome.result["ok"], outcome.message + str(outcome.result and outcome.result.get("error"))
    assert outcome.result["outputs"][0]["shape"] == [2, 12, 32]

    out = tmp_path / "bert.core.pt2"
    decompose = {"program": str(path), "to": "core", "output": str(out)}
    _, outcome = run_job("decompose", decompose, tmp_path / "dec", timeout_s=JOB_TIMEOUT_S)
    assert outcome.ok and outcome.result["ok"], outcome.message + str(outcome.result and outcome.result.get("error"))
    decomposed = read_archive(out).program()
    assert decomposed.graph.nodes and outcome.result["nodes_after"] > 0
