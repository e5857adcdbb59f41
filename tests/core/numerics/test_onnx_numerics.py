"""Numerics of an ONNX model op by op (core/numerics/onnx_run.py) on real exports of torch's dynamo exporter
(tests/onnx_programs.py): a faithful export has no divergence; one weight changed in a copy of the `.onnx` puts the
first divergence on the ONNX op that reads it; a fused Conv+BatchNorm is compared where its value leaves the Conv;
`--candidate onnx` exports the program first; without onnxruntime the job says which command installs it."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.formats import registry
from pt2_viewer.core.numerics.job import run_job
from tests.onnx_programs import CNN, DECODER, DYNAMIC, TRANSFORMER, onnx_path, source_program
from tests.programs import ExportFailed

pytest.importorskip("onnxruntime", reason="numerics of an ONNX model needs onnxruntime (pip install pt2-viewer[onnx])")
pytest.importorskip("onnxscript", reason="torch.onnx's dynamo exporter needs onnxscript (pip install pt2-viewer[onnx])")


def built(build: Callable[[str], Path], name: str) -> Path:
    """One test file of tests/onnx_programs.py; the test skipped, naming why, where torch cannot export the model."""
    try:
        return build(name)
    except ExportFailed as e:
        pytest.skip(f"{name} could not be exported: {e}")


@pytest.fixture(scope="module")
def onnx_file() -> Callable[[str], Path]:
    return lambda name: built(onnx_path, name)


def source(name: str) -> Path:
    return built(source_program, name)


def compare(name: str, candidate: str, out: Path) -> dict[str, Any]:
    result = run_job({"program": str(source(name)), "candidate": candidate}, out, lambda event: None)
    assert result["ok"], result.get("error")
    return result


def rows(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["node"]: r for r in result["nodes"]}


def shown_names(path: Path) -> set[str]:
    """The names the viewer gives the ONNX model's nodes (what a row's `candidate` names)."""
    return {n.name for n in registry.read(path).programs[0].graph.nodes}


@pytest.mark.parametrize("name", [CNN, TRANSFORMER, DECODER])
def test_a_faithful_export_has_no_divergence(name: str, onnx_file: Callable[[str], Path], tmp_path: Path) -> None:
    path = onnx_file(name)
    r = compare(name, str(path), tmp_path)
    assert r["kind"] == "onnx" and r["per_node"] is True and r["first_divergence"] is None
    assert r["memory"]["peak_held_bytes"] > 0  # ONNX Runtime's values, returned at once
    compared = [row for row in r["nodes"] if row.get("compared") is not False]
    assert r["compared"] == len(compared) >= 6
    assert all(float(row["error"]) < 1e-4 for row in compared)
    assert {row["candidate"] for row in compared} <= shown_names(path)  # rows name the ONNX node
    if name == CNN:  # each BatchNorm folded into its Conv: compared where the value leaves the Conv
        by = rows(r)
        assert by["batch_norm"]["group"] == ["conv2d", "batch_norm"]
        assert by["batch_norm"]["candidate"] == by["conv2d"]["candidate"]
        assert by["conv2d"]["compared"] is False and "FuseBatchNormIntoConv" in by["conv2d"]["note"]


def _changed_copy(path: Path, initializer: str, out: Path) -> Path:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    tensor = next(t for t in model.graph.initializer if t.name == initializer)
    values = numpy_helper.to_array(tensor).copy()
    values.flat[0] += 1.0 + abs(values).max() * 10  # one weight, far off
    tensor.CopyFrom(numpy_helper.from_array(values, initializer))
    copy = out / "changed.onnx"
    onnx.save(model, str(copy))
    return copy


@pytest.mark.parametrize(("name", "initializer"), [
    (CNN, "fc.weight"),  # the classifier's Gemm
    (CNN, "conv2.weight"),  # the second Conv, its BatchNorm fused in
    (TRANSFORMER, "layers.1.self_attn.out_proj.weight"),  # a Gemm deep in the second layer
    (TRANSFORMER, "layers.0.norm2.bias"),  # a LayerNormalization
])
def test_a_changed_weight_diverges_at_the_op_that_reads_it(name: str, initializer: str,
                                                           onnx_file: Callable[[str], Path], tmp_path: Path) -> None:
    import onnx

    path = onnx_file(name)
    model = onnx.load(str(path), load_external_data=False)
    reader = next(n.name for n in model.graph.node if initializer in n.input)
    changed = _changed_copy(path, initializer, tmp_path)
    r = compare(name, str(changed), tmp_path / "out")
    found = r["first_divergence"]
    assert found is not None
    assert rows(r)[found["node"]]["candidate"] == reader  # the dynamo exporter's names are the viewer's too
    faithful = compare(name, str(path), tmp_path / "faithful")
    assert faithful["first_divergence"] is None


def test_candidate_onnx_exports_the_program_first_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["numerics", str(source(DYNAMIC)), "--candidate", "onnx", "--json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "onnx" and doc["per_node"] is True and doc["first_divergence"] is None
    assert doc["compared"] == 3  # the two Linears (Gemm) and the GELU between them
    assert {row["candidate"] for row in doc["nodes"]} == {"node_linear", "node_gelu", "node_linear_1"}
    assert cli_main(["numerics", str(source(DYNAMIC)), "--candidate", "onnx", "-q"]) == 0
    assert "no divergence" in capsys.readouterr().out


def test_candidate_onnx_links_by_torchs_provenance(onnx_file: Callable[[str], Path], tmp_path: Path) -> None:
    """Exported here as `lower --to onnx` exports, each ONNX node names the source nodes it computes: no link is
    approximate, and the fused Conv computes its conv2d and batch_norm; a file of torch's own export is linked by
    module, op and order, its rows say so where the names differ."""
    exact = compare(CNN, "onnx", tmp_path / "exported")
    assert exact["first_divergence"] is None
    assert not any("approximate" in row["note"] for row in exact["nodes"])
    assert rows(exact)["batch_norm"]["group"] == ["conv2d", "batch_norm"]
    found = compare(CNN, str(onnx_file(CNN)), tmp_path / "file")
    assert "approximate" in rows(found)["batch_norm"]["note"] and "approximate" not in rows(found)["relu"]["note"]


def test_a_torchscript_export_is_compared_at_the_outputs(tmp_path: Path) -> None:
    """A `dynamo=False` export names no source node: its graph outputs stand for the program's, in order."""
    import torch

    from tests.onnx_programs import _model, _quietly

    model, args, _ = _model(DYNAMIC)  # seeded: the weights of source_program(DYNAMIC)
    path = tmp_path / "mlp.onnx"
    _quietly(lambda: torch.onnx.export(model, args, str(path), dynamo=False))
    r = compare(DYNAMIC, str(path), tmp_path / "out")
    assert r["compared"] == 1 and r["first_divergence"] is None
    (row,) = [row for row in r["nodes"] if row.get("compared") is not False]
    assert row["node"] == "linear_1" and "TorchScript" in row["note"] and float(row["error"]) < 1e-5


def test_without_onnxruntime_the_job_says_how_to_install_it(onnx_file: Callable[[str], Path], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = onnx_file(DYNAMIC)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises, as where not installed
    result = run_job({"program": str(source(DYNAMIC)), "candidate": str(path)}, tmp_path, lambda event: None)
    assert not result["ok"]
    assert "pip install pt2-viewer[onnx]" in json.dumps(result["error"])
