"""The Numerics tab of a `.pt2` compares it with an ONNX model op by op, through the real worker: a `.onnx` chosen
as its Lowered file, one weight changed in a copy, has its first divergence in bold at the op that reads it, the
candidate column naming the ONNX node. Offscreen; every wait is on a signal."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.main_window import MainWindow
from tests.app.numerics.test_numerics_panel import JOB_TIMEOUT, open_numerics_tab
from tests.core.numerics.test_onnx_numerics import _changed_copy, built
from tests.onnx_programs import CNN, onnx_path, source_program

pytestmark = pytest.mark.worker
pytest.importorskip("onnxruntime", reason="numerics of an ONNX model needs onnxruntime (pip install pt2-viewer[onnx])")
pytest.importorskip("onnxscript", reason="torch.onnx's dynamo exporter needs onnxscript (pip install pt2-viewer[onnx])")


def test_a_changed_onnx_weight_is_found_from_the_window(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    changed = _changed_copy(built(onnx_path, CNN), "fc.weight", tmp_path)
    doc, panel = open_numerics_tab(qtbot, window, built(source_program, CNN))
    assert panel.candidate.findData("onnx") >= 0
    panel.set_candidate("lowered", str(changed))
    assert ".onnx" in panel.table_path.placeholderText()
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result is not None and result.ok, panel.failure.error.text()
    assert result.kind == "onnx" and "First divergence: linear" in panel.summary.text()
    top = panel.table.item(0, 0)
    assert top.text() == "linear" and top.font().bold()
    assert not panel.table.isColumnHidden(1) and panel.table.item(0, 1).text() == "node_linear"
    qtbot.mouseClick(panel.go_first, Qt.MouseButton.LeftButton)
    assert doc.model.selection == "linear"
