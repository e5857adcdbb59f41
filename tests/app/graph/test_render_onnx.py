"""`pt2-viewer render FILE.onnx -o OUT.svg`, as a user runs it, on the real exports of tests/onnx_programs.py (the four
of issue 39 and the TorchScript ResNet): each draws its ONNX ops under the PyTorch modules the file names, a module of
one op titled with its class (`bn1: BatchNorm2d`), or with its op where the file names no class (`conv1: Conv`)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.onnx_programs import CNN, DECODER, DYNAMIC, RESNET, TRANSFORMER, onnx_path
from tests.programs import REPO_ROOT, ExportFailed

DRAWN = {  # texts each picture must hold: ops, module titles, a symbolic dim by its name
    CNN: (">bn1: BatchNorm2d<", ">fc: Linear<", ">ReduceMean<", ">conv1.weight<"),
    TRANSFORMER: ("▾ self_attn: MultiheadAttention<", ">norm1: LayerNorm<", ">Add<"),  # an open module
    DYNAMIC: (">hidden: Linear<", ">Gelu<", "f32[batch, 4]"),
    DECODER: ("LlamaDecoderLayer", ">lm_head: Linear<", "seq"),
    RESNET: (">conv1: Conv<", ">relu: Relu<", ">Add<"),
}


@pytest.mark.parametrize("name", list(DRAWN))
def test_render_draws_an_onnx_export_by_its_modules(name: str, tmp_path: Path) -> None:
    pytest.importorskip("onnxscript", reason="torch.onnx's dynamo exporter needs onnxscript (requirements-dev.txt)")
    try:
        model = onnx_path(name)
    except ExportFailed as e:
        pytest.skip(f"{name} could not be exported to ONNX: {e}")
    out = tmp_path / f"{name}.svg"
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", "render", str(model), "-o", str(out), "--expand",
                          "all"], capture_output=True, text=True, timeout=180, cwd=REPO_ROOT)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    svg = out.read_text(encoding="utf-8")
    missing = [text for text in DRAWN[name] if text not in svg]
    assert not missing, missing
