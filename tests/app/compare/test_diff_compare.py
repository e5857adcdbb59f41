"""The diff in the window's comparison (app/compare/diff_panel.py): Compare With… on two exports of ResNet-18 where
one block changed paints both sides, lists the change by module, reveals it on both sides with ‹ › and F3, and
"Show changes only" folds away every group without a change. Offscreen; every wait is on a condition."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.compare.session import LEFT, RIGHT
from pt2_viewer.core.diff.overlay import DIFF_OVERLAY
from pt2_viewer.core.graph import palette
from pt2_viewer.core.pt2.reader import read_archive
from tests.diff_programs import diff_program_path

TIMEOUT = 60_000


@pytest.fixture(scope="module")
def compared(qapp, request):  # type: ignore[no-untyped-def]
    qtbot = QtBot(request)
    window = MainWindow(interactive=False)
    window.resize(1400, 900)
    window.show()
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(diff_program_path("resnet")))
    doc = blocker.args[0]
    other = read_archive(diff_program_path("resnet_block_changed"))
    window.compare_with(doc, other, other.program())
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), CompareView), timeout=TIMEOUT)
    view = window.tabs.currentWidget()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.left.ready and view.right.ready, timeout=TIMEOUT)
    yield window, view
    window.close()
    window.deleteLater()


def test_both_sides_are_painted_and_the_list_holds_the_block(compared) -> None:  # type: ignore[no-untyped-def]
    _, view = compared
    panel = view.diff_panel
    assert panel.diff.summary == {"added": 0, "removed": 0, "changed": 2}
    assert panel.summary.text().startswith("0 added, 0 removed, 2 changed")
    heads = [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
    assert heads == ["layer2.1.relu: 2 op changes"]
    changed = palette.DIFF_CATEGORIES["changed"]
    for doc, nodes in ((view.left, {"relu__7", "relu__8"}), (view.right, {"gelu", "gelu_1"})):
        assert doc.tools.overlay_name == DIFF_OVERLAY
        overlay = doc.view.overlay
        assert overlay is not None and overlay.categories == dict.fromkeys(nodes, changed)


def test_a_collapsed_group_says_how_many_changes_it_holds(qtbot, compared) -> None:  # type: ignore[no-untyped-def]
    _, view = compared
    doc = view.right
    doc.collapse_all()
    qtbot.waitUntil(lambda: doc.ready and not doc.laying_out and "layer2" in doc.view.groups, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "layer2" in doc.tools.group_values, timeout=TIMEOUT)
    assert doc.tools.group_values["layer2"].text == "sum 2 changes over 2 nodes"
    assert "layer3" not in doc.tools.group_values  # no change there: its own colours
    doc.expand_to_depth(1)
    qtbot.waitUntil(lambda: doc.ready and not doc.laying_out, timeout=TIMEOUT)


def test_selection_follows_the_structural_match_not_the_name(compared) -> None:  # type: ignore[no-untyped-def]
    _, view = compared
    a, b = view.session.left, view.session.right
    module_a = {n.name: n.module_path for n in a.graph.nodes}
    module_b = {n.name: n.module_path for n in b.graph.nodes}
    # after the changed block every relu was renamed: relu__9 on the left is relu__7 on the right, in its own module
    assert module_a["relu__9"] != module_b["relu__9"]
    assert view.session.counterparts(LEFT, "relu__9") == ["relu__7"] and module_b["relu__7"] == module_a["relu__9"]
    view.select(LEFT, "relu__9")
    assert view.selected(RIGHT) == ["relu__7"]


def test_next_change_reveals_it_on_both_sides_and_f3_goes_on(qtbot, compared) -> None:  # type: ignore[no-untyped-def]
    _, view = compared
    panel = view.diff_panel
    qtbot.mouseClick(panel.next, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.right.model.selection == "gelu" and view.left.model.selection == "relu__7",
                    timeout=TIMEOUT)
    assert panel.position.text() == "change: 1 of 2"
    assert "relu__7 -> gelu" in view.link_text.text()
    assert view.link.isChecked()  # as the user left it: each side shows its own node, linked from there
    # the node is drawn on each side (its groups were opened) in the diff colour
    qtbot.waitUntil(lambda: "gelu" in view.right.view.nodes and "relu__7" in view.left.view.nodes, timeout=TIMEOUT)
    view.right.view.setFocus()
    qtbot.keyClick(view.right.view, Qt.Key.Key_F3)
    qtbot.waitUntil(lambda: view.right.model.selection == "gelu_1", timeout=TIMEOUT)
    assert view.left.model.selection == "relu__8" and panel.hits.at == 1
    qtbot.keyClick(view.right.view, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: view.right.model.selection == "gelu", timeout=TIMEOUT)
    # a click in the list does the same
    item = panel.items[1]
    qtbot.mouseClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=panel.tree.visualItemRect(item).center())
    qtbot.waitUntil(lambda: view.right.model.selection == "gelu_1", timeout=TIMEOUT)


def test_show_changes_only_folds_the_groups_without_one(qtbot, compared, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, view = compared
    before = {side: set(view.docs[side].model.level.scene.expanded) for side in (LEFT, RIGHT)}
    view.diff_panel.only.setChecked(True)
    for side in (LEFT, RIGHT):
        expanded = set(view.docs[side].model.level.scene.expanded)
        assert expanded == {"", "layer2", "layer2.1", "layer2.1.relu", "layer2.1.relu@1"}
    qtbot.waitUntil(lambda: view.left.ready and not view.left.laying_out and view.right.ready
                    and not view.right.laying_out, timeout=TIMEOUT)
    shots = os.environ.get("PT2V_SCREENSHOTS")  # set by hand to look at the painted diff
    if shots:
        view.window().grab().save(str(Path(shots) / "diff_compare.png"))
    view.diff_panel.only.setChecked(False)
    for side in (LEFT, RIGHT):
        assert set(view.docs[side].model.level.scene.expanded) == before[side]


def test_a_decomposition_is_listed_per_module_with_its_new_ops(qtbot, qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """GPT-2 beside its core ATen decomposition (torch's from_node provenance in the archive): added ops per module,
    painted on the right."""
    window = MainWindow(interactive=False)
    window.resize(1400, 900)
    window.show()
    try:
        with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
            window.open_path(str(diff_program_path("gpt2")))
        other = read_archive(diff_program_path("gpt2_core"))
        window.compare_with(blocker.args[0], other, other.program())
        qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), CompareView), timeout=TIMEOUT)
        view = window.tabs.currentWidget()
        assert isinstance(view, CompareView)
        qtbot.waitUntil(lambda: view.left.ready and view.right.ready, timeout=TIMEOUT)
        panel = view.diff_panel
        heads = [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
        attn = [h for h in heads if h.startswith("transformer.h.") and ".attn:" in h]
        assert len(attn) == 2 and all(h.split(": ", 1)[1].startswith("+") for h in attn)
        added = palette.DIFF_CATEGORIES["added"]
        overlay = view.right.view.overlay
        assert overlay is not None and added in set(overlay.categories.values())
        panel.only.setChecked(True)
        qtbot.waitUntil(lambda: not view.left.laying_out and not view.right.laying_out, timeout=TIMEOUT)
        shots = os.environ.get("PT2V_SCREENSHOTS")
        if shots:
            panel.step(1)
            qtbot.waitUntil(lambda: view.right.model.selection is not None, timeout=TIMEOUT)
            window.grab().save(str(Path(shots) / "diff_decomposition.png"))
    finally:
        window.close()
        window.deleteLater()
