"""Clicking a collapsed module group shows the group in Details (Help > Keyboard Shortcuts: "Click: select a node or a
collapsed group; Details shows it"), not the program's properties: its module and class, what it holds as its box
says it, its ops, the values crossing its border as links, and the groups inside it. On the bundled example (a real
two-layer transformer export), through the real window and real mouse clicks."""
from __future__ import annotations

from PySide6.QtCore import Qt

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.graph.details import NodeLink
from tests.app.graph.test_graph_tools import EXAMPLE, TIMEOUT, click, open_and_wait


def test_a_clicked_collapsed_group_shows_its_own_details(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.collapse_all()
    box = doc.view.groups["blocks.0"]
    assert not box.box.expanded
    doc.view.center_on_item("group:blocks.0")
    pos = doc.view.mapFromScene(box.sceneBoundingRect().center())
    qtbot.mouseClick(doc.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert doc.model.selection == "group:blocks.0"
    details = doc.panel_widgets.details
    assert doc.panels.currentWidget() is details  # "Details shows it"
    assert details.details is not None and details.details.kind == "group"
    assert "blocks.0" in details.title.text() and "The program" not in details.title.text()
    holds = [i.text(1) for i in details.row_items("Module") if i.text(0) == "holds"]
    assert holds == [box.count_text] or holds[0].startswith(box.count_text)  # counted as its box counts it
    ops = {i.text(0): i.text(1) for i in details.row_items("Ops")}
    assert any("linear" in op for op in ops) and all(v.startswith("× ") for v in ops.values())
    inside = [i.text(0) for i in details.row_items("Groups inside")]
    assert "blocks.0.attn" in inside
    # the values coming in link to the nodes outside that make them
    incoming = details.details.section("Inputs")
    assert incoming is not None and incoming.rows
    made_outside = {r.link.node for r in incoming.rows if isinstance(r.link, NodeLink)}
    members = {n for g in doc.model.level.scene.groups["blocks.0"].walk() for n in g.nodes}
    assert made_outside and not made_outside & members

    # a node clicked after it: the node's details
    node = next(iter(doc.view.nodes))
    click(qtbot, doc, node)
    assert doc.model.selection == node
    assert details.details is not None and details.details.kind not in ("group", "program")
