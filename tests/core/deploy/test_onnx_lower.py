"""`pt2-viewer lower SOURCE.pt2 --to onnx`: the written `.onnx` runs in ONNX Runtime with the program's values (at
another batch size where the program's batch is dynamic), and the result maps every source node to the ONNX nodes
it became, or `fused` with the rewrite rule (the CNN's BatchNorms folded into their convolutions), or `dropped`; the
links it writes into the file are torch's own `from_node` answer (tests/onnx_programs.py `provenance_truth`)."""
from __future__ import annotations

import json
import operator
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.deploy.onnx_lower import run
from pt2_viewer.core.jobs.schemas.onnx_lower import OnnxLowerRequest
from pt2_viewer.core.onnx.reader import read_onnx
from pt2_viewer.core.onnx.viewer_links import SOURCE_NODES, links_to_source, viewer_links
from pt2_viewer.core.pt2.reader import read_archive
from tests.onnx_programs import CNN, DYNAMIC, provenance_truth, source_program

pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript (pip install .[onnx])")
ort = pytest.importorskip("onnxruntime", reason="the written model is run by ONNX Runtime (pip install .[onnx])")
pytestmark = pytest.mark.worker


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`pt2-viewer ARGS -q` through the worker, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "pt2_viewer", *args, "-q"], capture_output=True, text=True,
                          timeout=600)


def _calls(path: Path) -> list[str]:
    import torch

    ep = torch.export.load(str(path))
    return [n.name for n in ep.graph.nodes if n.op == "call_function" and n.target is not operator.getitem]


def _torch_and_onnx(pt2: Path, onnx_file: Path, batch: int, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The program's output (torch running the `.pt2`) and the `.onnx`'s (ONNX Runtime) on one random input."""
    import torch

    x = torch.randn(batch, *shape)
    expected = torch.export.load(str(pt2)).module()(x).detach().numpy()
    session = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    return expected, got


def test_the_cnns_batchnorms_say_fused_with_their_rule_and_the_file_runs_with_the_programs_values(
        tmp_path: Path) -> None:
    pt2 = source_program(CNN)
    out = tmp_path / "cnn.onnx"
    done = cli("lower", str(pt2), "--to", "onnx", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert list(result) == ["onnx", "opset", "dynamic_dims", "nodes"]
    assert result["onnx"] == str(out) and result["opset"] >= 18 and result["dynamic_dims"] == []
    rows = {r["node"]: r for r in result["nodes"]}
    assert list(rows) == _calls(pt2)  # every source op once, in order, nothing invented
    for bn in ("batch_norm", "batch_norm_1"):
        assert rows[bn]["fate"] == "fused" and rows[bn]["rule"] == "FuseBatchNormIntoConv", rows[bn]
    assert rows["conv2d"]["fate"] == "fused" and rows["conv2d"]["onnx"] == rows["batch_norm"]["onnx"]
    assert rows["relu"]["fate"] == "onnx" and rows["relu"]["onnx"] and "rule" not in rows["relu"]

    expected, got = _torch_and_onnx(pt2, out, 2, (3, 16, 16))
    assert got == pytest.approx(expected, abs=1e-4)
    # the file names its source nodes: the viewer links by them, exactly
    archive = read_onnx(out)
    graph = archive.program().graph
    tagged = viewer_links(graph)
    convs = [n for n in graph.nodes if n.target.endswith("Conv")]
    assert convs and all(tagged[n.name] == ["conv2d", "batch_norm"] or tagged[n.name] == ["conv2d_1", "batch_norm_1"]
                         for n in convs)
    source = read_archive(pt2).program().graph
    links = links_to_source(graph, source)
    assert all(not k.approximate for found in links.values() for k in found)
    assert {k.node for k in links[convs[0].name]} == {"conv2d", "batch_norm"}


def test_a_dynamic_batch_stays_dynamic_and_runs_at_another_batch_size(tmp_path: Path) -> None:
    pt2 = source_program(DYNAMIC)
    out = tmp_path / "mlp.onnx"
    done = cli("lower", str(pt2), "--to", "onnx", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout and "dynamic dims" in done.stdout and "became" in done.stdout
    for batch in (1, 7):  # exported at 4
        expected, got = _torch_and_onnx(pt2, out, batch, (16,))
        assert got.shape == (batch, 4) and got == pytest.approx(expected, abs=1e-5)


def test_links_are_torchs_own_from_node_answer(tmp_path: Path) -> None:
    """Each ONNX node's source node, as the job writes it, is the one torch's provenance names for its FX node."""
    from pt2_viewer.core.onnx.provenance import fx_node_name

    pt2 = source_program(CNN)
    result = run(OnnxLowerRequest(program=str(pt2), output=str(tmp_path / "cnn.onnx")), tmp_path, lambda _e: None)
    assert result.ok, result.error
    truth = provenance_truth(CNN)
    import onnx

    model = onnx.load(str(tmp_path / "cnn.onnx"))
    checked = 0
    for node in model.graph.node:
        props = {p.key: p.value for p in node.metadata_props}
        fx = fx_node_name(props.get("pkg.torch.onnx.fx_node", ""))
        if fx in truth:
            assert truth[fx] in props[SOURCE_NODES].split(","), (node.name, fx)
            checked += 1
    assert checked == len(model.graph.node)


def test_the_default_output_leaves_the_users_own_onnx_alone(tmp_path: Path) -> None:
    pt2 = tmp_path / "model.pt2"
    pt2.write_bytes(source_program(DYNAMIC).read_bytes())
    theirs = tmp_path / "model.onnx"
    theirs.write_bytes(b"the user's own export")
    done = cli("lower", str(pt2), "--to", "onnx")
    assert done.returncode == 0, done.stderr
    assert theirs.read_bytes() == b"the user's own export"
    assert (tmp_path / "model.lowered.onnx").stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.lowered.onnx", "model.onnx", "model.pt2"]


def test_without_onnxscript_it_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxscript", None)  # an import of it fails, as on a Python without it
    result = run(OnnxLowerRequest(program=str(source_program(DYNAMIC)), output=str(tmp_path / "x.onnx")), tmp_path,
                 lambda _e: None)
    assert result.ok is False and result.error is not None and result.error.kind == "missing_module"
    assert "pip install pt2-viewer[onnx]" in result.error.hint and "onnxscript" in result.error.message
    assert not (tmp_path / "x.onnx").exists()
