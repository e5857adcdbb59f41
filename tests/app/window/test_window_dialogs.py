"""Issue 30: the Keyboard Shortcuts dialog cut its lines ("collap…"), and Export Report suggested "report.html"
whatever the program was called. Offscreen, on a real exported program; no dialog is shown modally (the file dialog
is answered by the test, as a user cancelling it)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from pt2_viewer.app.main_window import MainWindow
from tests.programs import REPO_ROOT

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
TIMEOUT = 60_000


def test_every_shortcut_line_is_whole(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    help_menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "&Help")
    next(a for a in help_menu.actions() if a.text() == "&Keyboard Shortcuts").trigger()
    dialog = window.shortcuts
    qtbot.waitUntil(dialog.isVisible)
    tree = dialog.tree
    metrics = tree.fontMetrics()
    lines = [tree.topLevelItem(i).text(1) for i in range(tree.topLevelItemCount())]
    assert "View › Collapse All Groups" in lines
    for column in (0, 1):
        widest = max(metrics.horizontalAdvance(tree.topLevelItem(i).text(column))
                     for i in range(tree.topLevelItemCount()))
        assert widest <= tree.columnWidth(column), column
    assert tree.columnWidth(0) + tree.columnWidth(1) <= tree.viewport().width()  # both columns in view
    assert dialog.width() <= dialog.screen().availableGeometry().width()


def test_export_report_suggests_the_program_s_name(qtbot, window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(EXAMPLE))
    asked: list[str] = []

    def cancel(_parent: object, _title: str, suggested: str, _filter: str) -> tuple[str, str]:
        asked.append(suggested)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", cancel)
    window.report_action.trigger()
    window.export_action.trigger()
    assert [Path(name).name for name in asked] == ["example.html", "example.svg"]
