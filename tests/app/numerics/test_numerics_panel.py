"""The Numerics tab in the window, through the real worker: compare a program exported here with its fp16 copy, see
the nodes sorted by error with the first divergence in bold, the error painted on the graph with its legend, and go
to the first divergence; a threshold that is not a number and a missing table file are refused in one line; a core
decomposition offers the compare view at the first divergence of a table that doubles conv2d. Offscreen; every wait
is on a signal or a condition."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QStyle

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.numerics.panel import NumericsPanel
from pt2_viewer.core.compare.session import LEFT, RIGHT
from pt2_viewer.core.jobs.schemas.failure import Failure
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.numerics.job import run
from pt2_viewer.core.numerics.readout import OVERLAY_NAME
from tests.core.numerics.programs import numerics_programs  # noqa: F401  (a fixture)
from tests.issue30_programs import transformer_names
from tests.programs import REPO_ROOT

# Every test here shows the Numerics tab, which asks the worker's torch whether it sees CUDA (app/run/panel.py
# CudaProbe, once per process): whichever test of a process shows it first starts that worker.
pytestmark = pytest.mark.worker

TIMEOUT = 60_000
JOB_TIMEOUT = 180_000  # the worker imports torch; the test machine's CPUs are shared


def open_numerics_tab(qtbot, window: MainWindow, path: Path) -> tuple[DocumentWidget, NumericsPanel]:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    doc = blocker.args[0]
    doc.panels.setCurrentWidget(doc.numerics_panel)
    return doc, doc.numerics_panel


def test_fp16_overflow_in_the_window(qtbot, window: MainWindow, numerics_programs: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    doc, panel = open_numerics_tab(qtbot, window, numerics_programs["overflow"])
    panel.set_candidate("fp16")
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result is not None and result.ok, panel.failure.error.text()
    assert "First divergence: mul_1" in panel.summary.text() and "Memory:" in panel.summary.text()
    cuda = panel.candidate.model().item(panel.candidate.findData("cuda"))
    assert cuda.isEnabled() == result.cuda_available  # off, saying why, where the worker's torch has no CUDA
    if not result.cuda_available:
        assert result.cuda_unavailable_reason and result.cuda_unavailable_reason in cuda.toolTip()

    # the table: every compared node, the largest error first; the infinite one is the first divergence, in bold
    assert panel.table.rowCount() == result.compared
    assert panel.table.item(0, 0).text() == "mul_1" and panel.table.item(0, 0).font().bold()
    errors = [float(panel.table.item(r, 2).text()) for r in range(panel.table.rowCount())]
    assert errors == sorted(errors, reverse=True)

    # the overlay: the error on the graph, with its legend
    qtbot.waitUntil(lambda: doc.ready, timeout=TIMEOUT)
    assert doc.tools.overlay_name == OVERLAY_NAME and doc.tools.legend.isVisible()
    overlay = doc.tools.extra[OVERLAY_NAME]
    assert overlay.levels["mul_1"] == 1.0 and overlay.text("mul_1").startswith("FIRST DIVERGENCE")
    assert doc.view.nodes["mul_1"].overlay_fill is not None

    assert panel.go_first.isEnabled() and not panel.open_compare.isEnabled()  # fp16 has no decomposed program
    # every column on screen: fp16 compares a node with its namesake, so no candidate column; names elide
    header = panel.table.horizontalHeader()
    assert panel.table.isColumnHidden(1)
    assert header.length() <= panel.table.viewport().width() + 1
    qtbot.mouseClick(panel.go_first, Qt.MouseButton.LeftButton)
    assert doc.model.selection == "mul_1"
    assert doc.panels.currentWidget() is panel  # the table stays in front while its rows are walked
    # Details shows the selected node's figures under its op
    rows = {r.text(0): r.text(1) for r in doc.panel_widgets["Details"].row_items("Numerics error")}
    assert rows["error"] == "inf  first divergence" and rows["threshold"] == "0.01"
    assert "max abs" in rows and "cosine" in rows
    assert "legend" not in rows and doc.tools.legend.notes()[:2] == ["threshold 0.01", "first divergence: mul_1"]
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton,
                     pos=panel.table.visualItemRect(panel.table.item(panel.table.rowCount() - 1, 0)).center())
    assert doc.model.selection == panel.table.item(panel.table.rowCount() - 1, 0).text()


def test_bad_choices_are_refused_in_one_line(qtbot, window: MainWindow, numerics_programs: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    _doc, panel = open_numerics_tab(qtbot, window, numerics_programs["overflow"])
    panel.threshold.setText("a lot")
    panel.compare()
    assert not panel.driver.running and "'a lot' is not a non-negative number" in panel.failure.error.text()
    panel.threshold.setText("0.01")
    panel.set_candidate("table", "/nonexistent/table.py")
    panel.compare()
    assert not panel.driver.running and "does not exist" in panel.failure.error.text()


def test_the_file_row_is_named_for_the_candidate(qtbot, window: MainWindow, numerics_programs: dict[str, Path],  # type: ignore[no-untyped-def]
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A .pte candidate's file row said "Table", "a .py file defining a decomposition table" (issue 43 §5)."""
    _doc, panel = open_numerics_tab(qtbot, window, numerics_programs["overflow"])
    asked: list[tuple[str, str]] = []
    folders: list[str] = []

    def dialog(_parent, title, folder, kinds):  # type: ignore[no-untyped-def]
        asked.append((title, kinds))
        folders.append(folder)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", dialog)
    panel.candidate.setCurrentIndex(panel.candidate.findData("lowered"))
    assert panel.file_label.text() == "Lowered file" and panel.table_path.isEnabled()
    assert ".pte" in panel.table_path.placeholderText() and "decomposition" not in panel.table_path.placeholderText()
    qtbot.mouseClick(panel.table_browse, Qt.MouseButton.LeftButton)
    assert "a .pte" in asked[-1][0] and "*.pte" in asked[-1][1]
    panel.candidate.setCurrentIndex(panel.candidate.findData("table"))
    assert panel.file_label.text() == "Table" and "decomposition table" in panel.table_path.placeholderText()
    qtbot.mouseClick(panel.table_browse, Qt.MouseButton.LeftButton)
    assert asked[-1][0] == "Decomposition table" and "*.py" in asked[-1][1]
    panel.candidate.setCurrentIndex(panel.candidate.findData("fp16"))
    assert panel.file_label.text() == "File" and not panel.table_path.isEnabled()
    assert folders == [str(numerics_programs["overflow"].parent)] * 2  # the program's folder, not the working one


def test_a_decomposition_result_offers_the_compare_view(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                       numerics_programs: dict[str, Path], tmp_path: Path) -> None:
    doc, panel = open_numerics_tab(qtbot, window, numerics_programs["convs"])
    table = str(REPO_ROOT / "tests" / "tables" / "tutorial_conv2d.py")
    result = run(NumericsRequest(program=str(numerics_programs["convs"]), candidate=table, save_candidate=True),
                 tmp_path, lambda e: None)
    panel.show_result(result)
    assert Path(str(result.candidate_program)).is_file() and Path(str(result.mapping)).is_file()
    assert panel.open_compare.isEnabled()
    tabs = window.tabs.count()
    with qtbot.waitSignal(panel.compare_requested, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(panel.open_compare, Qt.MouseButton.LeftButton)
    assert blocker.args[1] == "conv2d"
    # the window opens the comparison beside it, both sides on the first divergence
    qtbot.waitUntil(lambda: window.tabs.count() == tabs + 1, timeout=TIMEOUT)
    view = window.tabs.widget(window.tabs.currentIndex())
    assert isinstance(view, CompareView)
    assert view.selected(LEFT) == ["conv2d"] and view.selected(RIGHT), "the decomposed counterparts are selected"
    panel.show_result(NumericsResult(ok=False, error=Failure("run", "x")))  # a failed result clears the overlay
    assert OVERLAY_NAME not in doc.tools.extra


def test_cuda_is_offered_only_when_the_worker_s_torch_has_a_device(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                   numerics_programs: dict[str, Path]) -> None:
    """The candidate is off until the worker answers, as Run's button is, and follows the same answer."""
    from pt2_viewer.app.run.panel import CudaProbe
    from pt2_viewer.core.run.readout import CudaStatus

    probe = CudaProbe.shared()
    known = probe.status
    doc, panel = open_numerics_tab(qtbot, window, numerics_programs["overflow"])
    cuda = panel.candidate.model().item(panel.candidate.findData("cuda"))
    try:
        probe.learn(CudaStatus(False, "torch was built without CUDA"))
        assert not cuda.isEnabled() and "torch was built without CUDA" in cuda.toolTip()
        panel.set_candidate("cuda")  # a disabled item can still be set from code: it falls back
        probe.learn(CudaStatus(True, ""))
        assert cuda.isEnabled()
    finally:
        if known is not None:
            probe.learn(known)


def test_the_tab_fits_its_column_at_1280x800(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                             numerics_programs: dict[str, Path]) -> None:
    """Nothing is cut at the panel's right edge: the choices' combo boxes do not ask for their longest entry."""
    window.resize(1280, 800)
    doc, panel = open_numerics_tab(qtbot, window, numerics_programs["overflow"])
    qtbot.waitUntil(lambda: panel.isVisible() and panel.viewport().width() > 0)
    assert panel.widget().width() <= panel.viewport().width()
    doc.panels.setCurrentWidget(doc.run_panel)  # Run's too (a long dims label goes above its field)
    run = doc.run_panel
    qtbot.waitUntil(lambda: run.isVisible() and run.viewport().width() > 0)
    assert run.widget().width() <= run.viewport().width()


@pytest.fixture(scope="module")
def transformer() -> Path:
    return transformer_names()


def test_names_stay_apart_ops_lead_and_a_click_keeps_the_table(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                 transformer: Path) -> None:
    """Issue 30: at 1280x800 every row's node read "p_tran…weight", the weights at 0 error headed the table, and a
    click on a row switched the side panel to Details, so the table was gone."""
    window.resize(1280, 800)
    doc, panel = open_numerics_tab(qtbot, window, transformer)
    panel.set_candidate("core")
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0] is not None and blocker.args[0].ok, panel.failure.error.text()
    table = panel.table
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert "p_transformer_h_2_mlp_c_fc_weight" in names and "linear_5" in names
    # what each row shows of its name tells it from the others
    width = table.columnWidth(0) - 2 * table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) - 4
    shown = [table.fontMetrics().elidedText(n, table.textElideMode(), width) for n in names]
    assert len(set(shown)) == len(names), shown
    # among equal errors, the ops come before the weights and inputs they read
    placeholders = panel.placeholders
    assert {"x", "p_transformer_h_0_attn_c_attn_weight"} <= placeholders
    errors = [row.error.error for row in panel.rows]
    for r in range(1, len(names)):
        if errors[r] == errors[r - 1]:
            assert not (names[r - 1] in placeholders and names[r] not in placeholders), names
    assert names[0] not in placeholders
    # a click shows the node in the graph and leaves the table where it is
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualItemRect(table.item(1, 0)).center())
    assert doc.model.selection == names[1]
    assert doc.panels.currentWidget() is panel
