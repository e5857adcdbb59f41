"""The numerics job on real exported programs with a known place where the numbers go wrong: fp16 overflow, bf16
cancellation, a decomposition table that doubles every conv2d (the torch.export tutorial's), on small programs and
on ResNet-18 and a Llama decoder from the zoo; a table that changes no value; spilling the reference to disk;
outputs-only and CUDA refusals; a model script's eager model as the reference; the command line; one run through
the worker process."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.jobs.client import WorkerJob
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.numerics.job import run_job
from pt2_viewer.core.pt2.reader import read_archive
from tests.core.numerics.programs import numerics_programs  # noqa: F401  (a fixture)
from tests.programs import REPO_ROOT, ExportFailed
from tests.zoo.cache import program_by_id, zoo_path

DOUBLE_CONV = REPO_ROOT / "tests" / "tables" / "tutorial_conv2d.py"
RELU_AS_CLAMP = REPO_ROOT / "tests" / "tables" / "relu_as_clamp_function.py"


def compare(path: Path, out: Path, candidate: str, **request: Any) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    result = run_job({"program": str(path), "candidate": candidate, **request}, out, events.append)
    result["events"] = events
    return result


def zoo(program_id: str) -> Path:
    try:
        return zoo_path(program_by_id(program_id))
    except ExportFailed as e:
        pytest.skip(f"torch cannot export {program_id}: {e.reason}")


def nodes(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["node"]: n for n in result["nodes"]}


def test_fp16_overflow_diverges_at_the_square(numerics_programs: dict[str, Path], tmp_path: Path) -> None:
    r = compare(numerics_programs["overflow"], tmp_path, "fp16")
    assert r["ok"], r.get("error")
    by = nodes(r)
    assert r["first_divergence"]["node"] == "mul_1"  # z * z; the linear and the * 300 stay within the threshold
    assert by["mul_1"]["inf"] > 0 and by["mul_1"]["ref_inf"] == 0 and by["mul_1"]["error"] == "inf"
    assert float(by["linear"]["error"]) < 0.01 and float(by["mul"]["error"]) < 0.01
    assert set(r["first_divergence"]["inputs"]) == {"mul"}
    assert r["per_node"] and r["memory"]["peak_rss_bytes"] > 0
    assert any(e.get("stage") == "compare" for e in r["events"])


def test_bf16_cancellation_diverges_at_the_subtraction(numerics_programs: dict[str, Path], tmp_path: Path) -> None:
    r = compare(numerics_programs["cancellation"], tmp_path, "bf16")
    assert r["ok"], r.get("error")
    by = nodes(r)
    assert r["first_divergence"]["node"] == "sub"
    assert float(by["add"]["max_rel"]) < 0.01 < float(by["sub"]["max_rel"])
    assert by["sub"]["cosine"] < 0.99 and by["sub"]["sqnr_db"] < 20  # x is lost, not rounded
    # the downstream nodes are as wrong, but the divergence is where it entered
    assert float(by["tanh"]["error"]) > 0.01


def test_a_table_that_doubles_conv2d_diverges_at_the_first_conv(numerics_programs: dict[str, Path],
                                                                tmp_path: Path) -> None:
    r = compare(numerics_programs["convs"], tmp_path, str(DOUBLE_CONV))
    assert r["ok"], r.get("error")
    assert r["kind"] == "table"
    by = nodes(r)
    assert r["first_divergence"] == {"node": "conv2d", "error": 1.0, "inputs": ["x", "p_c1_weight", "p_c1_bias"]}
    assert by["conv2d"]["candidate"] == "mul"  # 2 * convolution: the node carrying the value onward
    assert by["x"]["error"] == 0.0 and by["p_c1_weight"]["error"] == 0.0
    assert not r["not_compared"]


def test_core_decomposition_matches_and_spilling_gives_the_same_answer(numerics_programs: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    held = compare(numerics_programs["convs"], tmp_path / "held", "core")
    spilled = compare(numerics_programs["convs"], tmp_path / "spilled", "core", budget_mb=0)
    assert held["ok"] and spilled["ok"]
    assert held["first_divergence"] is None and max(float(n["error"]) for n in held["nodes"]) < 1e-5
    assert held["memory"]["spilled_values"] == 0 and held["memory"]["peak_held_bytes"] > 0
    assert spilled["memory"]["spilled_values"] == len(spilled["nodes"]) and spilled["memory"]["peak_held_bytes"] == 0
    assert [n["max_abs"] for n in held["nodes"]] == [n["max_abs"] for n in spilled["nodes"]]
    assert not list((tmp_path / "spilled" / "spill").glob("*.pt"))  # each spilled value is removed once compared
    # every node the viewer shows is compared, under the names it shows
    shown = {n.name for n in read_archive(numerics_programs["convs"]).program().graph.nodes if n.op != "output"}
    assert set(nodes(held)) == shown


def test_a_table_that_changes_no_value_finds_no_divergence(numerics_programs: dict[str, Path],
                                                             tmp_path: Path) -> None:
    r = compare(numerics_programs["convs"], tmp_path, str(RELU_AS_CLAMP))
    assert r["ok"], r.get("error")
    assert r["first_divergence"] is None and nodes(r)["relu"]["candidate"] == "clamp_min"
    assert nodes(r)["relu"]["error"] == 0.0


def test_resnet18_with_the_doubled_conv2d_table(tmp_path: Path) -> None:
    r = compare(zoo("resnet18"), tmp_path, str(DOUBLE_CONV))
    assert r["ok"], r.get("error")
    assert r["first_divergence"]["node"] == "conv2d" and r["first_divergence"]["error"] == 1.0
    assert r["worst"][0]["node"] != "conv2d"  # the errors downstream are bigger; the divergence is still the first
    assert r["compared"] == 192


def test_llama_in_bf16_rounds_but_keeps_every_direction(tmp_path: Path) -> None:
    preload = str(REPO_ROOT / "tests" / "zoo" / "preload.py")
    # a threshold the rounded weights pass (p_model_embed_tokens_weight's error is about 3e-3): the first divergence
    # is still an op, since placeholders are neither candidates nor disqualifying inputs
    r = compare(zoo("llama"), tmp_path, "bf16", trust=True, preload=preload, threshold=1e-3)
    assert r["ok"], r.get("error")
    assert r["compared"] > 1000
    by = nodes(r)
    assert 0 < float(by["embedding"]["max_rel"]) < 0.01  # rounding only
    assert all(n["cosine"] > 0.99 for n in r["nodes"] if n["numel"] and n["error"] != "inf")
    assert float(by["p_model_embed_tokens_weight"]["error"]) > 1e-3  # over the threshold, yet not the divergence
    ops = {n.name: n.op for n in read_archive(zoo("llama")).program().graph.nodes}
    found = r["first_divergence"]
    assert found is not None and ops[found["node"]] == "call_function", found
    for i in found["inputs"]:  # every op it reads is within the threshold (a weight it reads may not be)
        assert ops[i] == "placeholder" or i not in by or float(by[i]["error"]) <= 1e-3


def test_cuda_is_refused_with_the_reason_on_a_machine_without_it(numerics_programs: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    r = compare(numerics_programs["overflow"], tmp_path, "cuda")
    assert not r["ok"] and r["error"]["kind"] == "cuda"
    assert r["cuda_unavailable_reason"] in r["error"]["message"]


def test_unknown_candidate_is_a_request_error(numerics_programs: dict[str, Path], tmp_path: Path) -> None:
    r = compare(numerics_programs["overflow"], tmp_path, "int4")
    assert not r["ok"] and r["error"]["kind"] == "request" and "bf16" in r["error"]["hint"]


@pytest.mark.slow
def test_compile_compares_outputs_only(numerics_programs: dict[str, Path], tmp_path: Path) -> None:
    r = compare(numerics_programs["cancellation"], tmp_path, "compile")
    assert r["ok"], r.get("error")
    assert not r["per_node"] and "only the outputs" in r["note"]
    assert [n["node"] for n in r["nodes"]] == ["out"] and float(r["nodes"][0]["error"]) < 1e-5


def test_cli_prints_the_first_divergence_and_exits_zero(numerics_programs: dict[str, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = str(numerics_programs["overflow"])
    assert cli_main(["numerics", path, "--candidate", "fp16", "-q"]) == 0
    text = capsys.readouterr().out
    assert "first divergence: mul_1" in text and "memory:" in text
    assert cli_main(["numerics", path, "--candidate", "fp16", "--threshold", "1e9", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # an infinite error passes any threshold
    assert doc["first_divergence"]["node"] == "mul_1" and doc["threshold"] == 1e9
    assert {"nodes", "worst", "memory", "first_divergence"} <= set(doc)
    assert math.isinf(float(doc["first_divergence"]["error"]))


def test_cli_fails_with_one_line_when_the_comparison_cannot_run(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.pt2"
    assert cli_main(["numerics", str(missing), "--candidate", "bf16", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_through_the_worker(numerics_programs: dict[str, Path], tmp_path: Path) -> None:
    job = WorkerJob(JobSpec("numerics", {"program": str(numerics_programs["cancellation"]), "candidate": "bf16"},
                            tmp_path))
    job.start()
    outcome = job.wait()
    assert outcome.status == "ok", outcome.message
    assert outcome.result["first_divergence"]["node"] == "sub"
    assert any(e.get("type") == "progress" for e in job.events)


DRIFTING_SCRIPT = '''"""Its second block reads a call counter: export bakes the count it saw, eager sees the next."""
import torch

CALLS = [0]


class Drift(torch.nn.Module):
    def forward(self, x):
        CALLS[0] += 1
        return x * CALLS[0]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(4, 4)
        self.drift = Drift()
        self.last = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.last(self.drift(self.first(x)))


model = Model()
example_args = (torch.randn(3, 4),)
'''


def test_a_script_s_eager_model_is_the_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "drift.py"
    script.write_text(DRIFTING_SCRIPT)
    r = run_job({"script": str(script)}, tmp_path, lambda e: None)
    assert r["ok"], r.get("error")
    by = nodes(r)
    assert [n["node"] for n in r["nodes"]] == ["first", "drift", "last"]  # module paths, in the program's order
    assert by["first"]["error"] == 0.0 and float(by["drift"]["error"]) > 0.1
    assert r["first_divergence"]["node"] == "drift" and r["kind"] == "script"
    example = REPO_ROOT / "resources" / "examples" / "convention.py"
    assert cli_main(["numerics", str(example), "--json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["first_divergence"] is None and {n["node"] for n in doc["nodes"]} == {"up", "down", "norm"}
