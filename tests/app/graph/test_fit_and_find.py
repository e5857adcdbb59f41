"""Issue 30's graph faults through the real window, on GPT-2 and ResNet-18 exported by this machine's torch
(tests/diff_programs.py): Fit (Ctrl+0) after Expand all (Ctrl+E) keeps the expansion, zoomed out to the legibility
floor from the start, and says what is below; Back and Forward go through expansions; Find finds a shape copied from
a node; F3 right after typing; the result list and the step bar agree; the minimap keeps out of the way and drops
cleared marks; a comparison's partner pane scrolls to a selection's counterpart. Offscreen, waiting on signals."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QApplication

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.view import READABLE_SCALE
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.graph.document import Expansion
from pt2_viewer.core.graph.highlight_state import HighlightState
from pt2_viewer.core.pt2.reader import read_archive
from tests.diff_programs import diff_program_path
from tests.first_view import SIZES

TIMEOUT = 240_000


def open_and_wait(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    assert isinstance(blocker.args[0], DocumentWidget)
    return blocker.args[0]


def action(window: MainWindow, text: str):  # type: ignore[no-untyped-def]
    menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "&View")
    return next(a for a in menu.actions() if a.text() == text)


def on_screen(doc: DocumentWidget, rect: QRectF) -> bool:
    return doc.view.viewport().rect().adjusted(-2, -2, 2, 2).contains(doc.view.mapFromScene(rect).boundingRect())


@pytest.mark.parametrize("case", ["gpt2", "resnet"])
def test_fit_after_expand_all_keeps_the_expansion_and_back_undoes_it(qtbot, window: MainWindow, case: str,
                                                                      tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, diff_program_path(case))
    scene = doc.model.level.scene
    first = set(scene.expanded)
    for size in SIZES:
        window.resize(*size)
        qtbot.waitUntil(lambda w=size[0]: doc.view.viewport().width() < w - 300)  # the graph's part of the window
        with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
            action(window, "&Expand All Groups").trigger()  # Ctrl+E
        everything = set(scene.expanded)
        heard: list[object] = []
        end = doc.model.subscribe(heard.append)
        statuses: list[str] = []
        doc.status.connect(statuses.append)
        action(window, "&Fit").trigger()  # Ctrl+0: nothing collapsed, nothing laid out again
        end()
        assert not any(isinstance(e, Expansion) for e in heard) and scene.expanded == everything
        assert doc.view.transform().m11() == pytest.approx(READABLE_SCALE), "zoomed out to the legibility floor"
        layout = doc.view.layout
        assert layout is not None and layout.start_inputs
        assert all(on_screen(doc, QRectF(*r)) for r in layout.start[:layout.start_inputs]), "the start is shown"
        said = statuses[-1]
        assert said.startswith("Fit: ") and " below, down to " in said and "scroll down" in said
        assert said.split(", at the smallest")[0].endswith(" and output")  # the program's end, named
        if case == "resnet":
            assert "down to fc and output" in said  # named, since they stay below the fold
        window.grab().save(str(tmp_path / f"{case}-fit-{size[0]}x{size[1]}.png"))
        # Back puts the first view's expansion back, Forward the expansion again
        with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
            assert doc.tools.back()
        assert scene.expanded == first
        with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
            assert doc.tools.forward()
        assert scene.expanded == everything
        with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
            doc.tools.back()


def test_find_a_shape_f3_after_typing_and_the_list_follows(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, diff_program_path("gpt2"))
    statuses: list[str] = []
    doc.status.connect(statuses.append)
    shape = "f32[1, 16, 64]"  # copied from a node: as a regex, a character class matching nothing meant
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    doc.find.setFocus()
    qtbot.waitUntil(lambda: doc.find.hasFocus())
    qtbot.keyClicks(doc.find, shape)
    qtbot.keyClick(doc.find, Qt.Key.Key_F3)  # at once, before the search would have run by itself
    assert doc.model.matches and doc.model.selection == doc.model.matches[0]
    assert statuses[-1].startswith(f"{len(doc.model.matches)} matches for '{shape}', searched as written")
    bar = doc.tools.step_bar
    assert bar.isVisible() and bar.label.text() == f"'{shape}' (literally): 1 of {len(doc.model.matches)}"
    qtbot.keyClick(doc.find, Qt.Key.Key_F3)
    qtbot.keyClick(doc.find, Qt.Key.Key_F3)
    assert bar.label.text().startswith(f"'{shape}' (literally): 3 of ")
    row = doc.results.currentRow()
    assert row == 2 and doc.results.item(row).data(Qt.ItemDataRole.UserRole) == doc.model.selection
    qtbot.keyClick(doc.find, Qt.Key.Key_Return)  # Enter goes on from there, as F3
    assert doc.results.currentRow() == 3 and bar.label.text().startswith(f"'{shape}' (literally): 4 of ")
    qtbot.keyClick(doc.find, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert doc.results.currentRow() == 2 and doc.model.selection == doc.model.matches[2]


def test_closing_the_bar_takes_find_s_red_marks_off_the_graph_and_the_minimap(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """× on the ‹ › bar left Find's matches red on the graph and the minimap (issue 43 §4), though the README says
    closing the bar takes the marks away."""
    doc = open_and_wait(qtbot, window, diff_program_path("resnet"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()
    qtbot.waitUntil(lambda: doc.minimap.isVisible())
    doc.find.setText("relu")
    doc.find.returnPressed.emit()
    qtbot.waitUntil(lambda: doc.tools.step_bar.isVisible() and len(doc.model.matches) > 1, timeout=TIMEOUT)
    matched = [n for n, item in doc.view.nodes.items() if item.state == HighlightState.MATCH]
    assert matched and any(not selected for _, selected in doc.minimap.marks)
    qtbot.mouseClick(doc.tools.step_bar.close_button, Qt.MouseButton.LeftButton)
    assert not doc.tools.step_bar.isVisible() and doc.model.matches == []
    assert not any(item.state == HighlightState.MATCH for item in doc.view.nodes.values())
    assert all(selected for _, selected in doc.minimap.marks)  # only the selection is left on the minimap


def test_the_minimap_keeps_out_of_the_way_and_drops_cleared_marks(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, diff_program_path("resnet"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()
    minimap = doc.minimap
    qtbot.waitUntil(lambda: minimap.isVisible())
    port = doc.view.viewport()
    room = port.width() + doc.view.viewportMargins().right()
    assert minimap.width() <= room / 6 + 1 and minimap.height() <= port.height() * 0.3 + 1
    # beside the graph, never over it (a corner over the graph still covered nodes, issue 43 §4): the view gave up
    # its column, and every node, the selected one too, is drawn left of it
    assert not minimap.geometry().intersects(port.geometry())
    assert minimap.x() > port.geometry().right() and doc.view.viewportMargins().right() >= minimap.width()
    doc.view.resetTransform()
    doc.view.scale(2.0, 2.0)  # wider than the window
    nodes = sorted(doc.view.nodes, key=lambda n: doc.view.nodes[n].sceneBoundingRect().center().y())
    name = nodes[len(nodes) // 2]
    doc.select(name)
    doc.view.centerOn(doc.view.nodes[name])
    qtbot.waitUntil(lambda: minimap.isVisible())
    assert not minimap.geometry().intersects(port.geometry())
    doc.view.fit()  # the graph fits: no minimap, and its column is given back
    qtbot.waitUntil(lambda: not minimap.isVisible())
    assert doc.view.viewportMargins().right() == 0
    doc.view.resetTransform()
    doc.view.scale(2.0, 2.0)
    qtbot.waitUntil(lambda: minimap.isVisible())
    # marks are painted over the picture from the view's states: cleared with the marks
    summary = doc.panel_widgets["Summary"]
    doc.panels.setCurrentWidget(summary)
    summary._op_clicked("aten.relu_.default")
    assert minimap.marks and len(minimap.marks) >= len(doc.model.marked)
    doc.tools.step_bar.close_button.click()
    assert doc.model.marked == [] and all(selected for _, selected in minimap.marks)


def test_a_comparison_shows_a_minimap_only_when_asked_and_scrolls_to_counterparts(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, diff_program_path("gpt2"))
    core = read_archive(diff_program_path("gpt2_core"))
    window.compare_with(doc, core, core.programs[0])
    qtbot.waitUntil(lambda: isinstance(window.current_tab(), CompareView), timeout=TIMEOUT)
    view = window.current_tab()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.left.ready and view.right.ready, timeout=TIMEOUT)
    for side in (view.left, view.right):
        with qtbot.waitSignal(side.graph_ready, timeout=TIMEOUT):
            side.expand_all()
        side.view.resetTransform()
    assert not view.left.minimap.isVisible() and not view.right.minimap.isVisible()
    view.minimaps.setChecked(True)
    qtbot.waitUntil(lambda: view.left.minimap.isVisible())
    assert not view.right.minimap.isVisible()  # the views move together: one is enough
    view.minimaps.setChecked(False)
    assert not view.left.minimap.isVisible()
    # a node near the end of the program: its counterpart on the right is far from where the linked view sits
    session = view.session
    node = next(n for n in reversed([n.name for n in doc.model.program.graph.nodes])
                if session.counterparts("left", n) and n in view.left.view.nodes)
    view.left.select(node)
    view.left.view.centerOn(view.left.view.nodes[node])
    view.select("left", node)
    partner = view.right.model.level.scene.visible_item(session.counterparts("left", node)[0])
    item = view.right.view.nodes[partner]
    shown = view.right.view.mapToScene(view.right.view.viewport().rect()).boundingRect()
    assert shown.contains(item.sceneBoundingRect().center())
    # linked, the pairing holds as the left view moves on
    step = view.left.view.verticalScrollBar()
    step.setValue(step.value() + 40)
    shown = view.right.view.mapToScene(view.right.view.viewport().rect()).boundingRect()
    assert shown.contains(item.sceneBoundingRect().center())


def test_fit_stepping_up_from_the_first_view_is_undone_by_back(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from tests.programs import REPO_ROOT

    doc = open_and_wait(qtbot, window, REPO_ROOT / "resources" / "examples" / "example.pt2")
    scene = doc.model.level.scene
    first, depth = set(scene.expanded), scene.expanded_depth()  # opened flat: the view's own expansion
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.fit()  # too big to read whole: Fit steps up to the module overview
    qtbot.waitUntil(lambda: not doc.laying_out)
    assert scene.expanded_depth() < depth
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        assert doc.tools.back()
    assert scene.expanded == first
