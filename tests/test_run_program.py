"""The run job on real programs: sample and generated inputs, output summaries, latency, per-node time, the failures
it explains (shape constraints, dtypes, unknown dims, CUDA missing), torch.compile and AOTInductor comparisons,
the `pt2-viewer run` command line and one run through the worker."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import torch

from app.cli import main as cli_main
from core.jobs.errors import JobFailure
from core.jobs.inputs import check_inputs
from core.jobs.run_program import run_job
from core.reader import read_archive
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)

VOCAB = 50


class TinyTagger(torch.nn.Module):
    """Token ids through an embedding, plus a float feature input, then a linear layer: int and float inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 8)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, ids: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.emb(ids) + feats))


@pytest.fixture(scope="session")
def tagger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A .pt2 with a dynamic batch (2..16) shared by both inputs, a static length 4, and saved sample inputs."""
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=16)
    ep = torch.export.export(TinyTagger(), (torch.randint(0, VOCAB, (3, 4)), torch.randn(3, 4, 8)),
                             dynamic_shapes=({0: batch}, {0: batch}))
    path = tmp_path_factory.mktemp("run-programs") / "tagger.pt2"
    torch.export.save(ep, path)
    return path


def run(path: Path, out: Path, **request: Any) -> dict[str, Any]:
    return run_job({"program": str(path), "warmup": 1, "runs": 3, **request}, out, lambda e: None)


def batch_symbol(path: Path) -> str:
    (symbol,) = read_archive(path).program().range_constraints
    return symbol


def test_sample_inputs_give_the_same_outputs_as_torch(tagger: Path, tmp_path: Path) -> None:
    result = run(tagger, tmp_path)
    assert result["ok"], result.get("error")
    assert result["inputs"]["source"] == "sample"
    assert [v["name"] for v in result["inputs"]["values"]] == ["ids", "feats"]
    assert result["inputs"]["sizes"] == {batch_symbol(tagger): 3}

    ep = torch.export.load(tagger)
    with torch.no_grad():
        expected = ep.module()(*ep.example_inputs[0])
    (out,) = result["outputs"]
    assert out["dtype"] == "float32" and out["shape"] == [3, 4, 3]
    assert out["min"] == pytest.approx(float(expected.min()), rel=1e-6)
    assert out["max"] == pytest.approx(float(expected.max()), rel=1e-6)
    assert out["mean"] == pytest.approx(float(expected.mean()), rel=1e-5, abs=1e-7)
    assert out["nan"] == 0 and out["inf"] == 0
    assert out["preview"] == pytest.approx(expected.reshape(-1)[:8].tolist(), rel=1e-6)
    lat = result["latency"]
    assert lat["runs"] == 3 and lat["warmup"] == 1 and 0 < lat["min_s"] <= lat["median_s"] <= lat["max_s"]
    assert result["cuda_available"] is torch.cuda.is_available()


def test_generated_inputs_follow_the_signature_and_overrides(tagger: Path, tmp_path: Path) -> None:
    sym = batch_symbol(tagger)
    result = run(tagger, tmp_path, inputs="generated", dims={"ids.shape[0]": 5}, seed=7)
    assert result["ok"], result.get("error")
    assert result["inputs"]["source"] == "generated" and result["inputs"]["sizes"] == {sym: 5}
    ids, feats = result["inputs"]["values"]
    assert ids["dtype"] == "int64" and ids["shape"] == [5, 4]
    assert 0 <= ids["min"] and ids["max"] < VOCAB  # ids stay valid for the embedding they feed
    assert feats["dtype"] == "float32" and feats["shape"] == [5, 4, 8]
    assert result["outputs"][0]["shape"] == [5, 4, 3]

    again = run(tagger, tmp_path, inputs="generated", dims={sym: 5}, seed=7)
    other = run(tagger, tmp_path, inputs="generated", dims={sym: 5}, seed=8)
    assert again["outputs"][0]["preview"] == result["outputs"][0]["preview"]
    assert other["outputs"][0]["preview"] != result["outputs"][0]["preview"]


@pytest.mark.parametrize(("dims", "kind", "words"), [
    ({"ids.shape[0]": 40}, "constraint", "ids.shape[0] is 40, outside the range [2, 16]"),
    ({"ids.shape[0]": 1}, "constraint", "torch.export specialises sizes 0 and 1"),
    ({"seq_len": 4}, "input", "No dynamic dim is called seq_len"),
])
def test_dims_that_break_the_program_are_explained(tagger: Path, tmp_path: Path, dims: dict[str, int], kind: str,
                                                   words: str) -> None:
    result = run(tagger, tmp_path, inputs="generated", dims=dims)
    assert result["ok"] is False
    assert result["error"]["kind"] == kind
    assert words in result["error"]["message"]
    assert "outputs" not in result


@pytest.mark.parametrize(("ids", "feats", "words"), [
    (torch.zeros(3, 4, dtype=torch.int64), torch.randn(3, 4, 8, dtype=torch.float64),
     "'feats' is float64 but the program was exported for float32"),
    (torch.zeros(3, 4, dtype=torch.int64), torch.randn(5, 4, 8), "both are"),
    (torch.zeros(3, 6, dtype=torch.int64), torch.randn(3, 6, 8), "exported with the static size 4"),
    (torch.zeros(3, dtype=torch.int64), torch.randn(3, 4, 8), "'ids' has 1 dims but the program expects 2"),
])
def test_given_inputs_are_checked_before_running(tagger: Path, ids: torch.Tensor, feats: torch.Tensor,
                                                 words: str) -> None:
    ep = torch.export.load(tagger)
    with pytest.raises(JobFailure) as info:
        check_inputs(ep, (ids, feats), {})
    assert info.value.failure.kind == "constraint"
    assert words in info.value.failure.message


def test_per_node_time_names_the_viewers_nodes(tagger: Path, tmp_path: Path) -> None:
    result = run(tagger, tmp_path, node_times=True)
    assert result["ok"], result.get("error")
    ops = {n.name for n in read_archive(tagger).program().graph.nodes if n.op.value == "call_function"}
    assert set(result["node_times"]) == ops
    hottest = [h["seconds"] for h in result["hottest"]]
    assert hottest == sorted(hottest, reverse=True) and all(s > 0 for s in hottest)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown when CUDA is missing")
def test_cuda_requested_without_cuda(tagger: Path, tmp_path: Path) -> None:
    result = run(tagger, tmp_path, device="cuda")
    assert result["ok"] is False and result["cuda_available"] is False
    assert result["error"]["kind"] == "cuda"
    assert "CUDA was requested but is not available" in result["error"]["message"]
    assert result["cuda_unavailable_reason"]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_runs_on_cuda(tagger: Path, tmp_path: Path) -> None:
    result = run(tagger, tmp_path, device="cuda", node_times=True)
    assert result["ok"], result.get("error")
    assert result["outputs"][0]["device"].startswith("cuda")
    cpu = run(tagger, tmp_path)
    assert result["outputs"][0]["mean"] == pytest.approx(cpu["outputs"][0]["mean"], rel=1e-4, abs=1e-6)


@pytest.mark.slow
def test_torch_compile_matches_eager(tagger: Path, tmp_path: Path) -> None:
    result = run(tagger, tmp_path, compile=True)
    assert result["ok"], result.get("error")
    c = result["compile"]
    assert c["difference"]["mismatch"] is None
    assert c["difference"]["max_abs"] < 1e-4
    assert c["compile_s"] > 0 and c["latency"]["median_s"] > 0


@pytest.mark.slow
def test_aoti_package_is_built_loaded_and_compared(tagger: Path, tmp_path: Path) -> None:
    package = tmp_path / "tagger.aoti.pt2"
    events: list[dict[str, Any]] = []
    result = run_job({"program": str(tagger), "aoti": True, "aoti_package": str(package), "warmup": 1, "runs": 3},
                     tmp_path, events.append)
    assert result["ok"], result.get("error")
    assert package.is_file()
    a = result["aoti"]
    assert a["package"] == str(package) and a["difference"]["mismatch"] is None
    assert a["difference"]["max_abs"] < 1e-4
    assert {"aoti_compile", "aoti_run"} <= {e["stage"] for e in events if e["type"] == "progress"}
    assert read_archive(package).aoti is not None  # the viewer sees it as an AOTInductor package


def test_cli_json_and_table(tagger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["run", str(tagger), "--json", "--runs", "2", "--warmup", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["device"] == "cpu"
    assert {"name", "dtype", "shape", "min", "max", "mean", "nan", "inf", "preview"} <= set(doc["outputs"][0])
    assert {"median_s", "min_s", "max_s", "iqr_s", "runs", "warmup"} <= set(doc["latency"])

    assert cli_main(["run", str(tagger), "--node-times", "--runs", "2", "-q"]) == 0
    text = capsys.readouterr().out
    assert "latency: median" in text and "float32" in text and "linear" in text

    assert cli_main(["run", str(tagger), "--inputs", "generated", "--dim", "ids.shape[0]=99", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: The inputs break the program's shape or dtype constraints")


def test_runs_through_the_worker(tagger: Path, tmp_path: Path) -> None:
    from core.worker.client import run_job as run_worker

    job, outcome = run_worker("run_program", {"program": str(tagger), "inputs": "generated", "dims": {"ids.shape[0]": 6},
                                              "runs": 2, "warmup": 1}, tmp_path, timeout_s=240)
    assert outcome.ok, outcome.message
    assert outcome.result["ok"], outcome.result.get("error")
    assert outcome.result["outputs"][0]["shape"] == [6, 4, 3]
    assert [e["stage"] for e in job.events if e["type"] == "progress"][-1] == "done"


def test_picks_a_program_of_a_multi_program_archive(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    path = pt2_path("two_programs")
    result = run(path, tmp_path, program_name="other")
    assert result["ok"], result.get("error")
    assert result["program_name"] == "other"
    assert result["inputs"]["values"][0]["shape"] == [4, 8]  # TopkCond's sample input, not Small's [3, 4]
    missing = run(path, tmp_path, program_name="nope")
    assert missing["error"]["kind"] == "load"
    assert "no program named 'nope'" in missing["error"]["message"] and "model, other" in missing["error"]["hint"]
