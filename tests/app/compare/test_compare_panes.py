"""Each pane of a comparison on its own: Expand all in one pane keeps that pane on its selection and leaves the other
pane on its counterpart (it scrolled both away, issue 43 §5), and F3 through the changes leaves Link views ticked
and both panes on their change (it unticked Link views every time). Compare With… on two real exports of ResNet-18 where
one block changed (test_diff_compare's `compared`, a window of this module's own); offscreen, waits on conditions."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.core.compare.session import LEFT
from pt2_viewer.core.graph.ids import group_of
from tests.app.compare.test_diff_compare import compared  # noqa: F401  (a fixture: this module's own window)

TIMEOUT = 60_000


def on_screen(doc: DocumentWidget, node: str) -> bool:
    """Whether the item showing `node` (its box, or the collapsed group holding it) is inside the pane's viewport."""
    shows = doc.model.level.scene.visible_item(node)
    path = group_of(shows)
    item = doc.view.groups.get(path) if path is not None else doc.view.nodes.get(shows)
    shown = doc.view.mapToScene(doc.view.viewport().rect()).boundingRect()
    return item is not None and shown.contains(item.sceneBoundingRect().center())


def settled(doc: DocumentWidget) -> bool:
    return doc.ready and not doc.laying_out


def test_expand_all_in_one_pane_keeps_both_panes_on_the_selection(qtbot, compared) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    _, view = compared
    for doc in view.docs.values():
        doc.collapse_all()
    qtbot.waitUntil(lambda: all(settled(d) and "layer3" in d.view.groups for d in view.docs.values()),
                    timeout=TIMEOUT)
    view.left.reveal("relu__9")  # deep in layer3: a click on it, once its group is open
    qtbot.waitUntil(lambda: settled(view.left) and "relu__9" in view.left.view.nodes, timeout=TIMEOUT)
    view.select(LEFT, "relu__9")
    assert view.selected(LEFT) == ["relu__9"] and view.selected("right") == ["relu__7"]
    qtbot.waitUntil(lambda: on_screen(view.left, "relu__9") and on_screen(view.right, "relu__7"), timeout=TIMEOUT)
    assert view.link.isChecked()
    right_centre = view.right.view.mapToScene(view.right.view.viewport().rect().center())

    expand = next(b for b in view.left.findChildren(QToolButton) if b.text() == "Expand all")
    with qtbot.waitSignal(view.left.graph_ready, timeout=TIMEOUT):
        qtbot.mouseClick(expand, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: settled(view.left), timeout=TIMEOUT)
    assert all(g.box.expanded for g in view.left.view.groups.values())
    assert on_screen(view.left, "relu__9"), "the pane expanded stays on its selection"
    assert on_screen(view.right, "relu__7"), "the other pane stays on the counterpart"
    assert view.right.view.mapToScene(view.right.view.viewport().rect().center()) == right_centre
    assert view.link.isChecked()
    # linked still: a zoom in one pane is the other's
    view.left.view.zoom(1.25)
    assert view.right.view.transform().m11() == pytest.approx(view.left.view.transform().m11())


def test_f3_through_the_changes_keeps_link_views_ticked(qtbot, compared) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    _, view = compared
    view.link.setChecked(True)
    panel = view.diff_panel
    view.right.view.setFocus()
    for a, b in (("relu__7", "gelu"), ("relu__8", "gelu_1"), ("relu__7", "gelu")):  # round and round
        qtbot.keyClick(view.right.view, Qt.Key.Key_F3)
        qtbot.waitUntil(lambda a=a, b=b: view.left.model.selection == a and view.right.model.selection == b,
                        timeout=TIMEOUT)
        qtbot.waitUntil(lambda: settled(view.left) and settled(view.right), timeout=TIMEOUT)
        assert view.link.isChecked(), "F3 leaves Link views as the user set it"
        qtbot.waitUntil(lambda a=a, b=b: on_screen(view.left, a) and on_screen(view.right, b), timeout=TIMEOUT)
    assert panel.hits.at == 0
    # still linked, from where each pane is: a zoom of one zooms the other, both stay on their change
    view.left.view.zoom(0.8)
    assert view.right.view.transform().m11() == pytest.approx(view.left.view.transform().m11())
    assert on_screen(view.left, "relu__7") and on_screen(view.right, "gelu")
