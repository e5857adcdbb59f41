"""Expanding a group from the right-click menu goes through the document model's `Expansion` event: the menu asks
the model, the model announces which group opened, and the graph view is laid out again from that announcement (a
change made on the model by anyone else reaches the view the same way). Through the real window, on the bundled
example (a real two-layer transformer export)."""
from __future__ import annotations

from PySide6.QtCore import QPoint

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.graph.document import DocumentEvent, Expansion, ExpansionCause
from tests.app.graph.test_graph_tools import EXAMPLE, TIMEOUT, _context_event, open_and_wait


def test_expanding_from_the_context_menu_reaches_the_view_through_the_event(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.collapse_all()
    box = doc.view.groups["blocks.0"]
    assert not box.box.expanded and "linear" not in doc.view.nodes
    heard: list[DocumentEvent] = []
    end = doc.model.subscribe(heard.append)
    centre = box.sceneBoundingRect().center()
    pos = doc.view.mapFromScene(centre)
    doc.view.contextMenuEvent(_context_event(doc, QPoint(pos.x(), pos.y())))
    menu = doc.menu
    assert menu is not None
    expand = next(a for a in menu.actions() if a.text() == "Expand Group")
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        expand.trigger()
    menu.close()
    assert heard == [Expansion((("blocks.0", True),), ExpansionCause.GROUP)]
    assert doc.view.groups["blocks.0"].box.expanded and doc.model.is_expanded("blocks.0")
    assert "blocks.0.attn" in doc.view.groups and not doc.view.groups["blocks.0.attn"].box.expanded

    # Another view collapsing it on the model (no widget call): the event alone redraws this one.
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.model.set_expanded("blocks.0", False)
    assert heard[-1] == Expansion((("blocks.0", False),), ExpansionCause.GROUP)
    assert not doc.view.groups["blocks.0"].box.expanded and "blocks.0.attn" not in doc.view.groups
    end()
