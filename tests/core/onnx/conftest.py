"""The real `.onnx` exports of tests/onnx_programs.py, built once and cached; skipped, naming the reason, when the
exporter's onnxscript is missing or torch refuses a model."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.programs import ExportFailed


@pytest.fixture(scope="session")
def onnx_file() -> Callable[[str], Path]:
    pytest.importorskip("onnxscript", reason="torch.onnx's dynamo exporter needs onnxscript (requirements-dev.txt)")
    from tests.onnx_programs import onnx_path

    def get(name: str) -> Path:
        try:
            return onnx_path(name)
        except ExportFailed as e:
            pytest.skip(f"{name} could not be exported to ONNX: {e}")

    return get
