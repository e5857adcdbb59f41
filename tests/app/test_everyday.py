"""The rough edges a daily user hits, driven through the real window: keys pressed where the focus is, menus that are
enabled only when they can act, the start page, and the lifetime of the temporary files the app writes.
Offscreen; every wait is on a signal or a condition."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtWidgets import QApplication, QFileDialog

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.export.script_document import ScriptDocument
from pt2_viewer.app.graph.view import READABLE_SCALE
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.platform import temp_dirs
from tests.programs import REPO_ROOT

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
SEVERAL = Path(__file__).parents[1] / "scripts" / "several_exports.py"
TIMEOUT = 240_000
CTRL = Qt.KeyboardModifier.ControlModifier


def open_and_wait(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    assert isinstance(blocker.args[0], DocumentWidget)
    return blocker.args[0]


def menu_action(window: MainWindow, menu: str, text: str):  # type: ignore[no-untyped-def]
    return next(a for m in window.menuBar().actions() if m.text() == menu
                for a in m.menu().actions() if a.text() == text)


def test_shortcuts_act_where_the_focus_is(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    doc.view.setFocus()
    qtbot.waitUntil(lambda: doc.view.hasFocus())

    def scale() -> float:
        return doc.view.transform().m11()

    before = scale()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Plus, CTRL)
    assert scale() == pytest.approx(before * 1.25)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Equal, CTRL)
    assert scale() == pytest.approx(before * 1.25 * 1.25)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Minus, CTRL)
    assert scale() == pytest.approx(before * 1.25)
    # Ctrl+0 is Fit (issue 22): it never shrinks labels below 9 px (READABLE_SCALE). The example's full depth does
    # not fit this window readably, so Fit steps up to the module overview, laid out again, which then fits whole
    # with its inputs on screen; the focus stays on the graph.
    depth = doc.model.level.scene.expanded_depth()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_0, CTRL)
    qtbot.waitUntil(lambda: doc.ready and not doc.laying_out)
    assert doc.model.level.scene.expanded_depth() < depth and doc.view.hasFocus()
    assert READABLE_SCALE <= scale() <= 1.0
    def viewport() -> QRect:
        return doc.view.viewport().rect().adjusted(-2, -2, 2, 2)

    def shown() -> QRect:  # the whole overview, where the view puts it
        return doc.view.mapFromScene(doc.view.sceneRect()).boundingRect()

    # in view once the view has settled (its scrollbars from the deeper level go in a later event)
    qtbot.waitUntil(lambda: viewport().contains(shown()), timeout=5_000)
    layout = doc.view.layout
    assert layout is not None and layout.start_inputs
    assert all(viewport().contains(doc.view.mapFromScene(QRectF(*r)).boundingRect())
               for r in layout.start[:layout.start_inputs])
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_F, CTRL)
    assert doc.find.isVisible() and doc.find.hasFocus()
    # Typing an invalid regex then says why, in the find bar.
    qtbot.keyClicks(doc.find, "soft(max")
    qtbot.waitUntil(lambda: "missing )" in doc.find.toolTip() or "missing )" in window.statusBar().currentMessage())


def test_program_menus_follow_the_current_tab_and_the_start_page_opens_examples(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    program = [menu_action(window, "&Program", t) for t in ("&Decompose…", "&Compare With…", "&Run…")]
    export = menu_action(window, "&File", "Export Graph as &SVG or PNG…")
    qtbot.waitUntil(lambda: window.stack.currentWidget() is window.start_page)  # nothing open, nothing opening
    assert not any(a.isEnabled() for a in program + [export])
    # The start page lists the bundled examples; a click opens one.
    examples = window.start_page.examples
    row = next(i for i in range(examples.count()) if examples.item(i).text() == "example.pt2")
    rect = examples.visualItemRect(examples.item(row))
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        qtbot.mouseClick(examples.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.stack.currentWidget() is window.tabs
    assert all(a.isEnabled() for a in program + [export])
    # Closing the last tab brings the start page back, now listing the file as recent, and disables the menus.
    menu_action(window, "&File", "&Close Tab").trigger()
    assert window.stack.currentWidget() is window.start_page
    assert not any(a.isEnabled() for a in program + [export])
    recent = window.start_page.recent
    assert recent.isVisibleTo(window) and recent.item(0).toolTip() == str(EXAMPLE)


def test_temporary_folders_of_dead_processes_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    live = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    try:
        stale = temp_dirs.root() / f"pt2v-{int(dead.stdout)}-run-crashed"
        kept = temp_dirs.root() / f"pt2v-{live.pid}-run-busy"
        mine = temp_dirs.new_dir("decompose")
        for d in (stale, kept):
            d.mkdir()
        (stale / "result.json").write_text("{}")
        assert stale in temp_dirs.sweep_stale()
        assert not stale.exists() and kept.is_dir() and mine.is_dir()
        assert temp_dirs.is_temporary(mine / "x.pt2") and not temp_dirs.is_temporary(tmp_path / "x.pt2")
        assert mine in temp_dirs.own_dirs() and kept not in temp_dirs.own_dirs()
        temp_dirs.remove(mine)
        temp_dirs.remove(tmp_path)  # not the app's: left alone
        assert not mine.exists() and tmp_path.is_dir()
    finally:
        live.communicate(b"\n")
        temp_dirs.remove(kept)
    assert not kept.exists()


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_a_scripts_program_opened_in_a_new_tab_outlives_the_script_tab(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    window = MainWindow(interactive=False, trust_scripts=True)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(SEVERAL))
    script = window.tabs.currentWidget()
    assert isinstance(script, ScriptDocument)
    runs = script.runs_root
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        script.new_tab_button.click()
    doc = blocker.args[0]
    assert isinstance(doc, DocumentWidget) and window.tabs.currentWidget() is doc
    copy = Path(doc.model.archive.path)
    # The script's tab closes: its run folder goes, the new tab's program stays.
    window.close_tab(window.tabs.indexOf(script))
    assert not runs.exists() and copy.is_file()
    assert window.tabs.currentWidget() is doc and menu_action(window, "&Program", "&Run…").isEnabled()
    assert not any(temp_dirs.is_temporary(p) for p in window.recent())
    assert str(SEVERAL.resolve()) in window.recent()
    target = tmp_path / "kept.pt2"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.save_program_dialog()
    assert target.read_bytes() == copy.read_bytes()
    assert (target.stat().st_mode & 0o777) == 0o666 & ~_umask()
    window.close_tab(window.tabs.indexOf(doc))
    assert not copy.parent.exists()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_side_panel_width_the_user_drags_to_is_remembered(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                              tmp_path: Path) -> None:
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QSplitter

    doc = open_and_wait(qtbot, window, EXAMPLE)
    split = doc.findChild(QSplitter)
    assert split.sizes()[1] >= 460  # room for Details' three columns at 1400 px
    handle = split.handle(1)
    start = QPointF(handle.rect().center())
    for kind, pos, buttons in ((QMouseEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton),
                               (QMouseEvent.Type.MouseMove, start - QPointF(150, 0), Qt.MouseButton.LeftButton),
                               (QMouseEvent.Type.MouseButtonRelease, start - QPointF(150, 0), Qt.MouseButton.NoButton)):
        QApplication.sendEvent(handle, QMouseEvent(kind, pos, handle.mapToGlobal(pos), Qt.MouseButton.LeftButton,
                                                   buttons, Qt.KeyboardModifier.NoModifier))
    dragged = split.sizes()
    assert dragged[1] > 600
    import shutil

    copy = shutil.copy(EXAMPLE, tmp_path / "example.pt2")  # another file: the same one opened again is its tab
    second = open_and_wait(qtbot, window, Path(copy))
    assert second is not doc and second.findChild(QSplitter).sizes() == dragged


def test_exported_images_open_again_with_the_users_permissions(qtbot, window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                               monkeypatch) -> None:
    from PySide6.QtGui import QImage, QImageReader

    from pt2_viewer.app.graph.export_image import _node_spans
    from pt2_viewer.core.graph.image_limits import MAX_BYTES, MAX_SIDE, column_plan, png_size

    doc = open_and_wait(qtbot, window, EXAMPLE)
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()
    whole, visible, svg = tmp_path / "whole.png", tmp_path / "visible.png", tmp_path / "graph.svg"
    for target, action in ((whole, "Export Graph as &SVG or PNG…"), (visible, "Export &Visible Area as SVG or PNG…"),
                           (svg, "Export Graph as &SVG or PNG…")):
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, t=target, **k: (str(t), ""))
        menu_action(window, "&File", action).trigger()
        assert (target.stat().st_mode & 0o777) == 0o666 & ~_umask()
    big, small = QImage(str(whole)), QImage(str(visible))
    assert not big.isNull() and not small.isNull()
    scene = doc.view.scene().sceneRect()
    # an expanded graph over three widths tall is folded into columns side by side (issue 30 §3): then the plan's size
    plan = column_plan(scene.width(), scene.height(), _node_spans(doc.view.scene(), scene))
    assert big.width() == (png_size(scene.width(), scene.height()) if plan is None else plan.size).width
    assert small.width() * small.height() < big.width() * big.height()
    assert "<svg" in svg.read_text()[:2000]
    # A graph as tall as the big ones (5,497 x 16,000 scene units) stays within what Qt reads back.
    size = png_size(5497, 16000)
    assert size.capped and max(size.width, size.height) <= MAX_SIDE and size.width * size.height * 4 <= MAX_BYTES
    assert QImageReader.allocationLimit() * 1024 * 1024 >= size.width * size.height * 4


def test_the_window_sweeps_stale_temporary_folders_once_it_is_up(qtbot) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.main_window import MainWindow

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    stale = temp_dirs.root() / f"pt2v-{int(dead.stdout)}-run-crashed"
    stale.mkdir()
    (stale / "result.json").write_text("{}")
    window = MainWindow(interactive=False)
    qtbot.addWidget(window)
    assert stale.is_dir(), "not while the window is being built"
    qtbot.waitUntil(lambda: not stale.exists(), timeout=10_000)
    window.layouts.close()
