"""The run job on real programs: sample and generated inputs, output summaries, latency, per-node time, the failures
it explains (shape constraints, dtypes, unknown dims, CUDA missing), torch.compile and AOTInductor comparisons,
the `pt2-viewer run` command line and one run through the worker."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.run.inputs import (
    DEFAULT_SIZE,
    check_inputs,
    generate_inputs,
    pick_size,
    range_end,
    symbol_ranges,
)
from pt2_viewer.core.run.job import run_job
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
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split() == ["node", "ms"])
    hottest = lines[header + 2:]  # the hottest nodes' table, under its header's rule, ends the text
    digits = [row.split()[-1].replace(".", "").lstrip("0") for row in hottest]
    assert hottest and all(len(d) >= 3 for d in digits), text  # 3 significant digits: microseconds are not 0.000

    assert cli_main(["run", str(tagger), "--inputs", "generated", "--dim", "ids.shape[0]=99", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: The inputs break the program's shape or dtype constraints")


def test_runs_through_the_worker(tagger: Path, tmp_path: Path) -> None:
    from pt2_viewer.core.jobs.client import run_job as run_worker

    request = {"program": str(tagger), "inputs": "generated", "dims": {"ids.shape[0]": 6}, "runs": 2, "warmup": 1}
    job, outcome = run_worker("run_program", request, tmp_path, timeout_s=240)
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


# --- programs as users export them: unbounded dims, and every kind of user input ---------------------------------

def _eager(path: Path, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The loaded program's own outputs for these inputs, flattened: what the run job must report."""
    import torch.utils._pytree as pytree

    with torch.no_grad():
        out = torch.export.load(path).module()(*args, **kwargs)
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


@pytest.mark.parametrize("name", ["tutorial_auto_dims", "tutorial_dynamic_dims"])
def test_unbounded_dims_run_with_sample_generated_and_overridden_sizes(
        pt2_path: Callable[[str], Path], tmp_path: Path, name: str) -> None:
    path = pt2_path(name)
    ep = torch.export.load(path)
    assert any(str(vr.upper) == "int_oo" for vr in ep.range_constraints.values())  # Dim.AUTO/DYNAMIC: no max
    assert all(hi is None for _lo, hi in symbol_ranges(ep).values())
    for request in ({"inputs": "sample"}, {"inputs": "generated"}):
        result = run(path, tmp_path, **request)
        assert result["ok"], result.get("error")
        # the traced sizes (w [6, 5], x [4], y [8, 4], z [32]) are inside every range, so generated inputs use them
        assert [o["shape"] for o in result["outputs"]] == [[6, 3], [32]]
    result = run(path, tmp_path, inputs="generated", dims={"w.shape[0]": 9, "x.shape[0]": 3, "y.shape[0]": 5})
    assert result["ok"], result.get("error")
    assert [o["shape"] for o in result["outputs"]] == [[9, 3], [15]]  # z follows as y.shape[0] * y.shape[1]
    z = result["inputs"]["values"][3]
    assert z["name"] == "z" and z["shape"] == [15]
    low = run(path, tmp_path, inputs="generated", dims={"x.shape[0]": 1})
    assert low["error"]["kind"] == "constraint"
    assert "x.shape[0] is 1, outside the range [2, inf]" in low["error"]["message"]


def test_a_size_with_no_traced_value_is_picked_inside_its_range() -> None:
    assert pick_size(None, 2, None, floor=2) == DEFAULT_SIZE
    assert pick_size(None, 8, None, floor=2) == 8
    assert pick_size(None, 2, 3, floor=2) == 3
    assert pick_size(6, 2, None) == 6 and pick_size(100, 2, 64) == 64 and pick_size(1, None, None, floor=2) == 2
    import sympy
    from torch.utils._sympy.numbers import int_oo

    assert [range_end(v) for v in (int_oo, -int_oo, sympy.oo, sympy.Symbol("s0"), sympy.Integer(7), 3)] == \
        [None, None, None, None, 7, 3]


@pytest.mark.parametrize("name", ["tutorial_mixed", "input_kinds"])
def test_every_kind_of_user_input_runs(pt2_path: Callable[[str], Path], tmp_path: Path, name: str) -> None:
    path = pt2_path(name)
    ep = torch.export.load(path)
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    for mode in ("sample", "generated"):
        result = run(path, tmp_path, inputs=mode, preview=64)
        assert result["ok"], result.get("error")
        assert [v["name"] for v in result["inputs"]["values"]] == names
    generated = generate_inputs(ep, seed=0)
    expected = _eager(path, generated.args, generated.kwargs)
    tensors = [o for o in result["outputs"] if o["kind"] == "tensor"]
    assert [o["shape"] for o in tensors] == [list(t.shape) for t in expected]
    assert tensors[0]["preview"] == pytest.approx(expected[0].reshape(-1).tolist(), rel=1e-5, abs=1e-6)


def test_constant_and_int_inputs_are_passed_back_and_checked(pt2_path: Callable[[str], Path],
                                                             tmp_path: Path) -> None:
    path = pt2_path("input_kinds")
    ep = torch.export.load(path)
    inputs = generate_inputs(ep, {"n": 11})
    x, pair, n, scale, flag, mode, nothing = inputs.args
    assert (n, scale, flag, mode, nothing) == (11, 0.5, True, "double", None)
    assert set(pair) == {"a", "b"} and inputs.kwargs["extra"] is None and inputs.kwargs["bias"].shape == (4,)
    assert check_inputs(ep, inputs.args, inputs.kwargs) == inputs.sizes
    with pytest.raises(JobFailure) as info:
        check_inputs(ep, (x, pair, True, 0.7, flag, mode, nothing), inputs.kwargs)
    message = info.value.failure.message
    assert "'n' should be an int but is a bool" in message
    assert "'scale' is 0.7 but the program was exported with the constant 0.5" in message
    result = run(path, tmp_path, inputs="generated", dims={"n": 11})
    assert result["ok"], result.get("error")
    assert result["outputs"][1] == {"name": "out[1]['n']", "kind": "int", "value": 11}

    mixed = torch.export.load(pt2_path("tutorial_mixed"))
    t0, t1, int_val, bool_val = generate_inputs(mixed).args
    assert (int_val, bool_val) == (16, False)
    with pytest.raises(JobFailure, match="'int_val' is 17 but the program was exported with the constant 16"):
        check_inputs(mixed, (t0, t1, 17, False), {})


def test_cli_runs_a_program_with_unbounded_dims(pt2_path: Callable[[str], Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = pt2_path("tutorial_auto_dims")
    assert cli_main(["run", str(path), "--inputs", "generated", "--dim", "w.shape[0]=7", "--runs", "1", "-q"]) == 0
    out = capsys.readouterr()
    assert "7x3" in out.out and "Traceback" not in out.err
