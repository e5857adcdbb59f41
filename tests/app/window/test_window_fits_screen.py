"""Issue 30: the window grew wider than the screen (1575 px at 1400x900 after three failing scripts and "Try it"),
cutting the side panel's tabs and the Problems text at its right edge; a window restored to a smaller screen must
fit it (app/window/screen_fit.py). The offscreen screen is 800x800: a geometry saved at 1400x900 is a bigger
screen's. Offscreen; every wait is on a signal or a condition."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QSettings
from PySide6.QtWidgets import QWidget

from pt2_viewer.app.export.script_document import ScriptDocument
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.window.screen_fit import available
from tests.programs import REPO_ROOT

DOCTOR = REPO_ROOT / "tests" / "scripts" / "doctor"
TIMEOUT = 240_000  # a script's export in the worker, on a shared machine


def right_edge(widget: QWidget, window: QWidget) -> int:
    return widget.mapTo(window, QPoint(widget.width(), 0)).x()


def test_a_window_saved_on_a_bigger_screen_opens_inside_this_one(qtbot) -> None:  # type: ignore[no-untyped-def]
    big = MainWindow(interactive=False)
    qtbot.addWidget(big)
    big.resize(1400, 900)
    big.move(300, 200)
    big.show()
    QSettings("pt2-viewer", "PT2 Viewer").setValue("window/geometry", big.saveGeometry())
    try:
        again = MainWindow(interactive=False)
        qtbot.addWidget(again)
        again.show()
        room = available(again)
        assert room.width() < 1400  # the test's premise: this screen is smaller than the one the size was saved on
        assert room.contains(again.geometry()), (again.geometry(), room)  # the frame is the window manager's
        assert again.minimumWidth() <= room.width() and again.minimumHeight() <= room.height()
    finally:
        QSettings("pt2-viewer", "PT2 Viewer").remove("window/geometry")


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_failing_scripts_and_try_it_never_widen_the_window(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(interactive=False, trust_scripts=True)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    scripts: list[ScriptDocument] = []
    try:
        for name in ("module_suggested_fixes.py", "module_equal_dims.py"):
            with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
                window.open_path(str(DOCTOR / name))
            doc = window.tabs.currentWidget()
            assert isinstance(doc, ScriptDocument)
            scripts.append(doc)
            assert doc.explanation.apply_fix.isVisible(), name  # the case has a fix to try
            with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
                doc.explanation.apply_fix.click()
            program = doc.program_document
            assert program is not None
            qtbot.waitUntil(lambda p=program: p.panels.isVisible())
            assert window.width() == 1280, name
            # what the tab holds fits a 1280 px screen, so nothing is cut at the window's right edge
            assert doc.minimumSizeHint().width() <= window.centralWidget().width(), name
            assert right_edge(program.panels, window) <= window.width(), name
            tabs = program.panels.tabBar()
            assert all(tabs.tabRect(i).right() < tabs.width() for i in range(tabs.count()))  # every tab on screen
    finally:
        for doc in scripts:
            doc.shutdown()
