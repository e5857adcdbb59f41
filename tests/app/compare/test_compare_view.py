"""Program > Decompose… and Compare With… in the window, through the real worker: conv + batchnorm training IR lowered
to core ATen opens beside the original; a click on conv2d selects convolution on the other side; the op diff table
and its highlight; linked zoom; saving the decomposed program; a broken custom table shows its error in the dialog;
two open programs compared with the best-effort mapping. Offscreen; every wait is on a signal or a condition."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog
from pytestqt.qtbot import QtBot

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.decompose.dialog import DecomposeDialog
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.view import GraphView
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.compare.session import LEFT, RIGHT
from pt2_viewer.core.graph.document import MATCH, SELECTED
from pt2_viewer.core.platform.trust import TrustStore
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)

TIMEOUT = 60_000
JOB_TIMEOUT = 180_000  # a worker imports torch and decomposes; the test machine's CPUs are shared



def open_and_wait(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    return blocker.args[0]


def click_node(qtbot, view: GraphView, name: str) -> None:  # type: ignore[no-untyped-def]
    item = view.nodes[name]
    view.centerOn(item)
    pos = view.mapFromScene(item.mapToScene(item.head.center()))  # the node's own lines, above its weight rows
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def wait_both_drawn(qtbot, view: CompareView) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: view.left.ready and view.right.ready, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: view.left.view.painted > 0 and view.right.view.painted > 0, timeout=TIMEOUT)


def decompose_to_core(qtbot, window: MainWindow, path: Path) -> CompareView:  # type: ignore[no-untyped-def]
    """Open `path`, Program > Decompose… to core ATen through the worker, and return the comparison it opens."""
    doc = open_and_wait(qtbot, window, path)
    dialog = window.decompose_dialog()
    assert isinstance(dialog, DecomposeDialog)
    dialog.set_target("core")
    with qtbot.waitSignal(dialog.decomposed, timeout=JOB_TIMEOUT):
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    # both sides' models are built off the GUI thread, then the comparison opens in a tab of its own
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), CompareView), timeout=JOB_TIMEOUT)
    view = window.tabs.currentWidget()
    assert isinstance(view, CompareView) and view.left.model.program is doc.model.program
    return view


@pytest.fixture(scope="module")
def decomposed_window(qapp, request, pt2_path: Callable[[str], Path]):  # type: ignore[no-untyped-def]  # noqa: F811
    """One window, one real decomposition through the worker, shared by the tests that only look at the result."""
    qtbot = QtBot(request)
    window = MainWindow(interactive=False)
    window.resize(1400, 900)
    window.show()
    view = decompose_to_core(qtbot, window, pt2_path("batchnorm_train"))
    wait_both_drawn(qtbot, view)
    for side in (view.left, view.right):
        side.expand_all()
    qtbot.waitUntil(lambda: "conv2d" in view.left.view.nodes and "convolution" in view.right.view.nodes,
                    timeout=TIMEOUT)
    yield window, view
    window.close()
    window.deleteLater()


@pytest.fixture
def core_view(decomposed_window) -> CompareView:  # type: ignore[no-untyped-def]
    return decomposed_window[1]


def test_decomposition_opens_beside_the_original_with_synced_selection(qtbot, decomposed_window) -> None:  # type: ignore[no-untyped-def]
    window, view = decomposed_window
    assert window.tabs.count() == 2 and window.tabs.tabText(1) == "batchnorm_train.pt2 ⟷ core ATen"
    assert set(view.left.view.nodes) == {n.name for n in view.session.left.graph.nodes}
    assert set(view.right.view.nodes) == {n.name for n in view.session.right.graph.nodes}

    click_node(qtbot, view.left.view, "conv2d")
    assert view.selected(LEFT) == ["conv2d"] and view.selected(RIGHT) == ["convolution"]
    assert view.right.view.nodes["convolution"].state == SELECTED
    assert view.left.view.nodes["conv2d"].state == SELECTED
    assert view.link_text.text() == "conv2d became convolution (from_node)"
    # each side's Details shows its node: the one clicked, and what it became
    assert view.details[LEFT].details.name == "conv2d" and view.details[RIGHT].details.name == "convolution"
    assert view.details[RIGHT].title.text().count("convolution") >= 1 and view.details[RIGHT].isVisible()

    click_node(qtbot, view.right.view, "_native_batch_norm_legit_functional")
    assert view.selected(LEFT) == ["batch_norm"]
    assert view.left.view.nodes["batch_norm"].state == SELECTED
    assert view.left.view.nodes["conv2d"].state != SELECTED  # the earlier link is gone
    assert view.right.view.nodes["convolution"].state != SELECTED

    assert view.details[LEFT].details.name == "batch_norm"
    # the op table is as wide as its columns, leaving the rest to the two Details
    assert view.table.width() < view.width() // 2
    assert view.table.rowHeight(0) <= view.table.fontMetrics().height() + 8


def test_op_diff_table_rows_and_highlight(qtbot, core_view: CompareView) -> None:  # type: ignore[no-untyped-def]
    view = core_view
    table = view.table
    rows = {table.item(r, 0).text(): [table.item(r, c).text() for c in range(1, 5)] for r in range(table.rowCount())}
    assert rows["aten.conv2d.default"] == ["1", "0", "-1", "yes"]
    assert rows["aten.convolution.default"] == ["0", "1", "+1", "yes"]
    assert rows["aten._native_batch_norm_legit_functional.default"] == ["0", "1", "+1", "no"]
    assert "aten._native_batch_norm_legit_functional.default ×1" in view.non_core.text()

    r = next(i for i in range(table.rowCount()) if table.item(i, 0).text() == "aten.add_.Tensor")
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualItemRect(table.item(r, 0)).center())
    left_states = {n: i.state for n, i in view.left.view.nodes.items()}
    assert left_states["add_"] == SELECTED and left_states["add__1"] == MATCH  # the first revealed, the rest marked
    assert not any(i.state == MATCH for i in view.right.view.nodes.values())  # in-place adds are gone on the right
    assert view.link_text.text().startswith("aten.add_.Tensor: 2 nodes on the left, 0 on the right (marked; ")
    # the row revealed its first node on screen; next goes to the other
    left = view.left.view
    assert left.mapToScene(left.viewport().rect()).boundingRect().contains(
        left.nodes["add_"].sceneBoundingRect().center())
    assert view.left.tools.step_bar.isVisible() and view.left.tools.step_bar.label.text() == "aten.add_.Tensor: 1 of 2"
    assert not view.right.tools.step_bar.isVisible()
    assert view.left.tools.move_hit(1)
    qtbot.waitUntil(lambda: view.left.model.selection == "add__1")
    assert left.mapToScene(left.viewport().rect()).boundingRect().contains(
        left.nodes["add__1"].sceneBoundingRect().center())


def test_linked_views_follow_zoom_and_the_decomposed_program_saves(qtbot, core_view: CompareView,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path) -> None:
    view = core_view
    assert view.link.isChecked()
    view.left.view.zoom(1.25)
    assert view.right.view.transform().m11() == pytest.approx(view.left.view.transform().m11())
    view.link.setChecked(False)
    view.left.view.zoom(1.25)
    assert view.right.view.transform().m11() != pytest.approx(view.left.view.transform().m11())

    target = tmp_path / "bn.core.pt2"
    assert view.save_decomposed(str(target)) == f"Saved {target}"
    saved = read_archive(target).program()
    assert [n.name for n in saved.graph.nodes] == [n.name for n in view.session.right.graph.nodes]
    assert [p.name for p in tmp_path.iterdir()] == ["bn.core.pt2"]  # no temporary file left behind
    assert "Could not save" in view.save_decomposed(str(tmp_path / "missing" / "x.pt2"))


def test_a_broken_custom_table_shows_its_error(qtbot, window: MainWindow, pt2_path: Callable[[str], Path],  # type: ignore[no-untyped-def]  # noqa: F811
                                               tmp_path: Path) -> None:
    open_and_wait(qtbot, window, pt2_path("batchnorm_train"))
    table = tmp_path / "my_table.py"
    table.write_text("import torch\n\nnot_a_table = 3\n")
    dialog = window.decompose_dialog()
    assert dialog is not None
    dialog.set_target("table", str(table))
    with qtbot.waitSignal(dialog.failed, timeout=5_000) as refused:  # not trusted yet: nothing runs
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert "has not been trusted" in refused.args[0] and "my_table.py" in refused.args[0]

    TrustStore.default().trust(table)
    with qtbot.waitSignal(dialog.failed, timeout=JOB_TIMEOUT) as failed:
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert "'my_table.py' has no decomposition table" in failed.args[0]
    assert dialog.error.isVisible() and dialog.error.text() == failed.args[0]
    assert dialog.start_button.isEnabled() and window.tabs.count() == 1


def test_compare_with_another_open_program(qtbot, window: MainWindow, pt2_path: Callable[[str], Path],  # type: ignore[no-untyped-def]  # noqa: F811
                                           monkeypatch) -> None:
    open_and_wait(qtbot, window, pt2_path("batchnorm_train_decomposed"))
    first = open_and_wait(qtbot, window, pt2_path("batchnorm_train"))
    asked: list[list[str]] = []

    def pick(_parent, _title, _label, items, *_a, **_k):  # type: ignore[no-untyped-def]
        asked.append(list(items))
        return items[0], True

    monkeypatch.setattr(QInputDialog, "getItem", pick)
    window.tabs.setCurrentWidget(first)
    window.compare_dialog()
    assert asked == [["batchnorm_train_decomposed.pt2 (1)", "Another file…"]]
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), CompareView), timeout=TIMEOUT)  # off-thread build
    view = window.tabs.currentWidget()
    assert isinstance(view, CompareView) and view.session.method == "guess"
    assert view.title() == "batchnorm_train.pt2 ⟷ batchnorm_train_decomposed.pt2"
    assert not view.save_button.isVisible()
    wait_both_drawn(qtbot, view)
    for side in (view.left, view.right):
        side.expand_all()
    qtbot.waitUntil(lambda: "mul" in view.left.view.nodes and "mul" in view.right.view.nodes, timeout=TIMEOUT)
    click_node(qtbot, view.left.view, "mul")
    assert view.selected(RIGHT) == view.session.counterparts(LEFT, "mul") == ["mul"]
    assert view.right.view.nodes["mul"].state == SELECTED
