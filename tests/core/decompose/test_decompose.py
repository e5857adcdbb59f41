"""The decompose job on real programs exported by this torch: functional and core ATen targets, custom tables from
files, the node mapping from provenance, op counts, and the failures a user can meet (a decomposition that raises,
broken table files, a custom op that is not registered), in-process, through the CLI and through the worker."""
from __future__ import annotations

import json
import operator
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.compare.mapping import read_mapping
from pt2_viewer.core.decompose.job import run_job
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)

TABLES = Path(__file__).parents[2] / "tables"


class Block(torch.nn.Module):
    """A small pre-norm transformer block: causal self-attention with sdpa, then a ReLU MLP."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.down(torch.relu(self.up(self.ln2(x))))


class MutatesConstant(torch.nn.Module):
    """A plain tensor attribute (lifted as a constant, not a buffer) updated in place: decomposition refuses it."""

    def __init__(self) -> None:
        super().__init__()
        self.c = torch.tensor([1.0, 2.0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.c.add_(1)
        return x + self.c


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`exported(name)` -> a .pt2 of one of this file's models, exported once per session."""
    folder = tmp_path_factory.mktemp("decompose-programs")
    builders = {
        "block": lambda: torch.export.export(Block(), (torch.randn(2, 8, 16),),
                                             dynamic_shapes=({1: torch.export.Dim("T", min=2, max=64)},)),
        "mutates_constant": lambda: torch.export.export(MutatesConstant(), (torch.randn(2),)),
    }
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            path = folder / f"{name}.pt2"
            torch.export.save(builders[name](), path)
            done[name] = path
        return done[name]

    return get


def decompose(program: Path, out: Path, to: str, **extra: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    result = run_job({"program": str(program), "to": to, "output": str(out / f"{program.stem}.{Path(to).stem}.pt2"),
                      **extra}, out, events.append)
    return result, events


def diff_of(result: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {r["op"]: (r["before"], r["after"]) for r in result["op_diff"]}


def assert_mapping_names_real(result: dict[str, Any], before: Path) -> None:
    """Every node the mapping file names exists in the archives as the viewer's reader sees them."""
    mapping = read_mapping(result["mapping"])
    before_names = {n.name for n in read_archive(before).program().graph.nodes}
    after_names = {n.name for n in read_archive(result["output"]).program().graph.nodes}
    assert set(mapping.before_nodes) == before_names
    assert set(mapping.after_nodes) == after_names
    assert {k.before for k in mapping.links} <= before_names and {k.after for k in mapping.links} <= after_names


def test_functional_makes_training_ir_buffer_updates_functional(pt2_path: Callable[[str], Path],
                                                                tmp_path: Path) -> None:
    src = pt2_path("batchnorm_train")
    result, events = decompose(src, tmp_path, "functional")
    assert result["ok"], result.get("error")
    diff = diff_of(result)
    assert diff["aten.add_.Tensor"] == (2, 0)  # the module's counter and bn's num_batches_tracked
    assert diff["aten.add.Tensor"][1] - diff["aten.add.Tensor"][0] == 2
    assert diff["aten.batch_norm.default"] == (1, 0)
    assert diff["aten._native_batch_norm_legit_functional.default"] == (0, 1)
    assert diff["aten.conv2d.default"] == (1, 1)  # functional only: conv2d is not decomposed
    assert "aten.conv2d.default" in result["non_core_ops"]

    mapping = read_mapping(result["mapping"])
    after_nodes = read_archive(result["output"]).program().graph.node_by_name
    in_place = [n.name for n in read_archive(src).program().graph.nodes if n.target == "torch.ops.aten.add_.Tensor"]
    for name in in_place:
        links = mapping.after_of(name)
        assert [(after_nodes[k.after].target, k.method) for k in links] == [("torch.ops.aten.add.Tensor", "from_node")]
    assert [k.after for k in mapping.after_of("batch_norm")] == ["_native_batch_norm_legit_functional"]
    assert mapping.unmapped_after == []
    assert_mapping_names_real(result, src)

    # the decomposed program is a real program: torch loads it and it has BUFFER_MUTATION outputs now
    ep = torch.export.load(result["output"])
    kinds = {s.kind.name for s in ep.graph_signature.output_specs}
    assert "BUFFER_MUTATION" in kinds
    stages = [e["stage"] for e in events if e["type"] == "progress"]
    assert stages[0] == "load" and stages[-1] == "done" and "decompose" in stages


def test_core_aten_turns_conv2d_into_convolution(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    src = pt2_path("batchnorm_train")
    result, _ = decompose(src, tmp_path, "core")
    assert result["ok"], result.get("error")
    diff = diff_of(result)
    assert diff["aten.conv2d.default"] == (1, 0)
    assert diff["aten.convolution.default"] == (0, 1)
    assert "aten.convolution.default" not in result["non_core_ops"]
    assert torch.Tag.core in torch.ops.aten.convolution.default.tags
    mapping = read_mapping(result["mapping"])
    assert [(k.before, k.method) for k in mapping.before_of("convolution")] == [("conv2d", "from_node")]
    assert read_archive(result["output"]).root == Path(result["output"]).stem  # saved under its own name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batchnorm_train.core.mapping.json",
                                                         "batchnorm_train.core.pt2"]  # no temp files left
    assert_mapping_names_real(result, src)


def test_tutorial_custom_table_doubles_the_convolution(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    src = pt2_path("batchnorm_train")
    result, _ = decompose(src, tmp_path, str(TABLES / "tutorial_conv2d.py"))
    assert result["ok"], result.get("error")
    assert result["target"] == "table"
    mapping = read_mapping(result["mapping"])
    became = read_archive(result["output"]).program().graph.node_by_name
    targets = sorted(became[k.after].target for k in mapping.after_of("conv2d"))
    # one node became two: the convolution and the tutorial's "2 *"
    assert targets == ["torch.ops.aten.convolution.default", "torch.ops.aten.mul.Tensor"]
    assert {k.method for k in mapping.after_of("conv2d")} == {"from_node"}


def test_table_given_as_a_function_keyed_by_an_op_packet(exported: Callable[[str], Path], tmp_path: Path) -> None:
    result, _ = decompose(exported("block"), tmp_path, "table", table=str(TABLES / "relu_as_clamp_function.py"))
    assert result["ok"], result.get("error")
    diff = diff_of(result)
    assert diff["aten.relu.default"] == (1, 0)
    assert diff["aten.clamp_min.default"] == (0, 1)
    # a table holding only relu decomposes nothing else: linear stays
    assert diff["aten.linear.default"][1] == diff["aten.linear.default"][0] == 4


def test_transformer_block_to_core_aten(exported: Callable[[str], Path], tmp_path: Path) -> None:
    src = exported("block")
    result, _ = decompose(src, tmp_path, "core")
    assert result["ok"], result.get("error")
    diff = diff_of(result)
    assert diff["aten.linear.default"] == (4, 0)
    assert diff["aten.scaled_dot_product_attention.default"][1] == 0
    assert result["nodes_after"] > result["nodes_before"]
    assert result["unmapped_after"] == []
    mapping = read_mapping(result["mapping"])
    linears = [n for n in mapping.before_nodes if n.startswith("linear")]
    assert all(mapping.after_of(n) for n in linears)  # each linear became something (addmm/view/permute ...)
    assert_mapping_names_real(result, src)
    # still the same function: the decomposed program computes what the original did, with a new T in range
    x = torch.randn(2, 5, 16)
    before = torch.export.load(src).module()(x)
    after = torch.export.load(result["output"]).module()(x)
    torch.testing.assert_close(after, before)


def test_a_decomposition_that_raises_is_a_structured_error(exported: Callable[[str], Path], tmp_path: Path) -> None:
    result, events = decompose(exported("mutates_constant"), tmp_path, "core")
    assert result["ok"] is False
    error = result["error"]
    assert error["kind"] == "decompose"
    assert "is mutated in the forward method" in error["message"]
    assert error["hint"] and "Traceback" in error["detail"]
    assert events[-1]["type"] == "job_failed"
    assert not list(tmp_path.glob("*.pt2"))  # nothing half-written


@pytest.mark.parametrize(("source", "kind", "words"), [
    ("import torch\ndecomp_table = {torch.ops.aten.relu.default: lambda x: x\n", "import", "syntax error on line"),
    ("import torch\nX = 3\n", "table", "has no decomposition table"),
    ("decomp_table = [1, 2]\n", "table", "is a list, not a dict"),
    ("decomp_table = {'relu': abs}\n", "table", "not an ATen op"),
    ("import torch\ndecomp_table = {torch.ops.aten.relu.default: 3}\n", "table", "not a function"),
    ("def get_decomp_table():\n    raise ValueError('no table today')\n", "table", "raised ValueError: no table today"),
    ("raise RuntimeError('boom at import')\n", "import", "raised RuntimeError: boom at import"),
])
def test_broken_table_files_are_explained(pt2_path: Callable[[str], Path], tmp_path: Path, source: str, kind: str,
                                          words: str) -> None:
    table = tmp_path / "my_table.py"
    table.write_text(source)
    result, _ = decompose(pt2_path("batchnorm_train"), tmp_path, str(table))
    assert result["ok"] is False
    assert result["error"]["kind"] == kind
    assert words in result["error"]["message"] and "my_table.py" in result["error"]["message"]


def test_cli_writes_program_and_mapping_and_fails_clearly(pt2_path: Callable[[str], Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bn.core.pt2"
    assert cli_main(["decompose", str(pt2_path("batchnorm_train")), "--to", "core", "-o", str(out), "-q"]) == 0
    printed = capsys.readouterr().out
    assert out.exists() and (tmp_path / "bn.core.mapping.json").exists()
    assert "aten.convolution.default" in printed and "bn.core.mapping.json" in printed
    mapping = json.loads((tmp_path / "bn.core.mapping.json").read_text())
    assert mapping["before_to_after"]["conv2d"] == [{"node": "convolution", "method": "from_node"}]

    bad = tmp_path / "broken.py"
    bad.write_text("def oops(:\n")
    assert cli_main(["decompose", str(pt2_path("batchnorm_train")), "--to", str(bad), "-q"]) == 1
    err = capsys.readouterr().err
    assert "error: The decomposition table file 'broken.py' has a syntax error on line 1" in err


def test_runs_in_the_worker_and_names_a_missing_custom_op(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    """A fresh worker process has not registered the test's custom op: the job says which, and loads with the file."""
    from pt2_viewer.core.jobs.client import run_job as run_worker

    src = pt2_path("custom_op")
    job, outcome = run_worker("decompose", {"program": str(src), "to": "core"}, tmp_path / "a", timeout_s=240)
    assert outcome.ok, outcome.message
    assert outcome.result["ok"] is False
    assert outcome.result["error"]["kind"] == "missing_op"
    assert "pt2v_test::scale_add.default" in outcome.result["error"]["message"]

    job, outcome = run_worker("decompose", {"program": str(src), "to": "core",
                                            "preload": str(REPO_ROOT / "tests" / "programs.py")},
                              tmp_path / "b", timeout_s=240)
    assert outcome.ok, outcome.message
    assert outcome.result["ok"], outcome.result.get("error")
    assert Path(outcome.result["output"]) == tmp_path / "b" / "decomposed.pt2"
    assert any(e["type"] == "progress" and e["stage"] == "decompose" for e in job.events)
    assert "torch.ops.pt2v_test.scale_add.default" in {n.target for n in
                                                        read_archive(outcome.result["output"]).program().graph.nodes}


def test_getitem_nodes_are_left_out_as_the_archive_does(pt2_path: Callable[[str], Path]) -> None:
    from pt2_viewer.core.decompose.provenance import shown_nodes

    ep = torch.export.load(pt2_path("batchnorm_train")).run_decompositions({})
    assert any(n.target is operator.getitem for n in ep.graph.nodes)
    assert not any(getattr(n, "target", None) is operator.getitem for n in shown_nodes(ep.graph))


def test_cli_subprocess_exit_status_for_a_missing_file(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pt2_viewer", "decompose", str(tmp_path / "nope.pt2"), "-q"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "nope.pt2' does not exist" in proc.stderr
