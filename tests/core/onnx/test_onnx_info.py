"""`pt2-viewer info FILE.onnx [--json]` on real exports, and on the hostile `.onnx` files of tests/hostile_onnx.py:
the JSON's exact shape (the model as the file holds it), and one line with exit status 1 for every file that cannot
be shown, nothing of it run or read beyond the model itself."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest

from pt2_viewer.core.cli import exit_status, info
from tests import hostile_onnx
from tests.onnx_programs import CNN, COND, DYNAMIC, RESNET

OnnxFile = Callable[[str], Path]


def _info(path: Path, capsys: pytest.CaptureFixture[str], as_json: bool = True) -> tuple[int, str, str]:
    status = info.main(argparse.Namespace(file=str(path), json=as_json))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_info_json_is_the_model_as_the_file_holds_it(onnx_file: OnnxFile, capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    path = onnx_file(CNN)
    model = onnx.load(str(path))
    status, out, err = _info(path, capsys)
    assert status == 0 and err == ""
    got = json.loads(out)
    assert list(got) == ["format", "ir_version", "opset", "producer", "graphs"]
    assert got["format"] == "onnx" and got["ir_version"] == model.ir_version == 10
    assert got["opset"] == {"ai.onnx": 20} and got["producer"].startswith("pytorch 2.")
    (graph,) = got["graphs"]
    assert list(graph) == ["name", "node_count", "nodes", "inputs", "outputs", "initializers"]
    assert graph["name"] == model.graph.name and graph["node_count"] == len(model.graph.node) == len(graph["nodes"])
    assert [n["name"] for n in graph["nodes"]] == [n.name for n in model.graph.node]
    assert all(list(n) == ["name", "op_type", "domain", "source"] for n in graph["nodes"])
    conv = graph["nodes"][0]
    assert conv == {"name": conv["name"], "op_type": "Conv", "domain": "ai.onnx",
                    "source": {"node": "_native_batch_norm_legit_no_training", "module": "bn1"}}
    assert graph["inputs"] == [{"name": "x", "dtype": "float32", "shape": [2, 3, 16, 16]}]
    assert graph["outputs"][0]["shape"] == [2, 10]
    assert {"name": "conv1.weight", "dtype": "float32", "shape": [8, 3, 3, 3]} in graph["initializers"]
    assert len(graph["initializers"]) == len(model.graph.initializer)


def test_info_json_names_symbolic_dims_subgraphs_and_no_source_without_metadata(
        onnx_file: OnnxFile, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _info(onnx_file(DYNAMIC), capsys)
    assert json.loads(out)["graphs"][0]["inputs"] == [{"name": "x", "dtype": "float32", "shape": ["batch", 16]}]
    _, out, _ = _info(onnx_file(COND), capsys)
    graphs = json.loads(out)["graphs"]
    assert [g["name"] for g in graphs] == ["main_graph", "true_graph_0", "false_graph_0"]
    assert [n["op_type"] for n in graphs[1]["nodes"]] == ["Sin", "Mul"]
    assert "If" in [n["op_type"] for n in graphs[0]["nodes"]] and graphs[0]["node_count"] == len(graphs[0]["nodes"])
    _, out, _ = _info(onnx_file(RESNET), capsys)
    nodes = json.loads(out)["graphs"][0]["nodes"]
    assert nodes and all(n["source"] is None for n in nodes)  # the TorchScript exporter writes no metadata
    assert "/layer1/layer1.0/conv1/Conv" in [n["name"] for n in nodes]
    status, out, err = _info(onnx_file(RESNET), capsys, as_json=False)
    assert status == 0 and "program 'main_graph' (ONNX)" in out and err == ""


@pytest.mark.parametrize("name", list(hostile_onnx.HOSTILE))
def test_a_hostile_onnx_file_gets_one_line(name: str, onnx_file: OnnxFile, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    build, said = hostile_onnx.HOSTILE[name]
    folder = tmp_path / "model"
    folder.mkdir()
    path = build(onnx_file(CNN), folder / "model.onnx")
    for as_json in (False, True):
        status, out, err = _info(path, capsys, as_json)
        assert status == exit_status.FAILED and out == ""
        assert err.startswith("pt2-viewer: 'model.onnx' ") and err.count("\n") == 1 and said in err, err


def test_external_data_beside_the_model_is_never_read(onnx_file: OnnxFile, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = hostile_onnx.beside_missing(onnx_file(CNN), tmp_path / "model.onnx")
    assert not (tmp_path / "model.onnx.data").exists()  # reading it would fail: the graph opens without it
    status, out, _ = _info(path, capsys)
    assert status == 0
    assert {"name": "conv1.weight", "dtype": "float32", "shape": [8, 3, 3, 3]} in json.loads(out)["graphs"][0][
        "initializers"]
    status, out, _ = _info(path, capsys, as_json=False)
    assert status == 0 and "conv1.weight" in out


def test_without_the_onnx_package_info_says_how_to_install_it(onnx_file: OnnxFile, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = onnx_file(CNN)
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError, as where it is not installed
    for as_json in (False, True):
        status, out, err = _info(path, capsys, as_json)
        assert status == exit_status.FAILED and out == ""
        assert err.count("\n") == 1 and err.rstrip().endswith("Install it with: pip install onnx"), err


_OPEN_EACH = """
import argparse, contextlib, io, json, sys
from pt2_viewer.core.cli import info
statuses = []
for path in sys.argv[1:]:
    with contextlib.redirect_stderr(io.StringIO()) as err:
        statuses.append((info.main(argparse.Namespace(file=path, json=True)), err.getvalue().count(chr(10))))
print(json.dumps({"statuses": statuses,
                  "imported": sorted(m for m in ("torch", "onnxruntime", "onnxscript") if m in sys.modules)}))
"""


def test_a_hostile_onnx_file_runs_nothing_and_reads_nothing_outside_its_folder(onnx_file: OnnxFile,
                                                                              tmp_path: Path) -> None:
    """Each hostile file in a fresh Python, as `pt2-viewer info` opens it: one line, exit status 1, and neither torch
    nor ONNX Runtime nor onnxscript imported (nothing of the model runs). The files outside the model's folder that
    the external data names are FIFOs: opening one blocks until a writer comes, so a reader that followed a `location`
    there would hang this test past its timeout instead of refusing it."""
    import os
    import subprocess

    paths = []
    for name, (build, _) in hostile_onnx.HOSTILE.items():
        folder = tmp_path / name.replace(" ", "_") / "model"
        folder.mkdir(parents=True)
        paths.append(str(build(onnx_file(CNN), folder / "model.onnx")))
        secret = folder.parent / "secret.bin"  # linked_out's target
        if secret.exists():
            secret.unlink()
            os.mkfifo(secret)
    os.mkfifo(tmp_path / "outside_folder" / "outside.onnx.data")  # outside_folder's `../outside.onnx.data`
    done = subprocess.run([sys.executable, "-c", _OPEN_EACH, *paths], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["statuses"] == [[exit_status.FAILED, 1]] * len(hostile_onnx.HOSTILE)
    assert got["imported"] == []
