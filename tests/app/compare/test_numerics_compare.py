"""Numerics → "Open in compare view": the decomposed candidate a Numerics job saved opens beside the original with a
real op diff (counted on the two programs), and closing that comparison leaves the Numerics job's folder, which the
Numerics panel still uses, where it is. A Program > Decompose… comparison, by contrast, owns its folder and removes it
(tests/app/compare/test_compare_view.py). Offscreen; every wait is on a signal or a condition."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.compare.decomposition import Decomposition, Owner
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest
from pt2_viewer.core.numerics.job import run
from pt2_viewer.core.platform import temp_dirs
from tests.core.numerics.programs import numerics_programs  # noqa: F401  (a fixture)
from tests.programs import REPO_ROOT

TIMEOUT = 60_000


def test_numerics_candidate_in_the_compare_view_keeps_the_numerics_folder(  # type: ignore[no-untyped-def]
        qtbot, window: MainWindow, numerics_programs: dict[str, Path]) -> None:
    program = numerics_programs["convs"]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(program))
    doc = blocker.args[0]
    panel = doc.numerics_panel
    folder = temp_dirs.new_dir("numerics")  # the folder the Numerics panel gives its job
    try:
        table = str(REPO_ROOT / "tests" / "tables" / "tutorial_conv2d.py")
        result = run(NumericsRequest(program=str(program), candidate=table, save_candidate=True), folder,
                     lambda e: None)
        assert result.ok, result.error
        decomposition = Decomposition.from_numerics(result)
        assert decomposition is not None and decomposition.owner is Owner.NUMERICS_JOB
        assert decomposition.folder == folder and not decomposition.may_delete(Owner.COMPARE_TAB)
        panel.show_result(result)
        tabs = window.tabs.count()
        qtbot.mouseClick(panel.open_compare, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.tabs.count() == tabs + 1, timeout=TIMEOUT)
        view = window.tabs.widget(window.tabs.currentIndex())
        assert isinstance(view, CompareView)
        # the op table: the table turned each conv2d into a convolution and a mul
        rows = {r.op: r for r in view.session.rows}
        assert (rows["aten.conv2d.default"].before, rows["aten.conv2d.default"].after) == (2, 0)
        assert rows["aten.convolution.default"].after == 2 and rows["aten.mul.Tensor"].change == 2
        assert view.table.rowCount() == len(rows) > 0
        shown = {view.table.item(r, 0).text(): view.table.item(r, 3).text() for r in range(view.table.rowCount())}
        assert shown["aten.conv2d.default"] == "-2"
        assert view.title().endswith("table tutorial_conv2d.py")
        # closing the comparison leaves the Numerics job's folder, and the candidate in it, where they are
        window.close_tab(window.tabs.currentIndex())
        assert folder.is_dir() and Path(str(result.candidate_program)).is_file()
        assert Path(str(result.mapping)).is_file()
        # the panel can open it again
        qtbot.mouseClick(panel.open_compare, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.tabs.count() == tabs + 1, timeout=TIMEOUT)
    finally:
        temp_dirs.remove(folder)
