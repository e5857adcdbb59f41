"""A real ~10,000-node program (a 135-layer transformer-like model exported and decomposed by torch; built once and
cached by bench/big_model.py): it opens collapsed to module groups, lays out in pieces, and search reaches inside."""
from __future__ import annotations

import pytest

from pt2_viewer.app.main_window import MainWindow
from tests.big_programs import big_program

pytestmark = pytest.mark.slow
TIMEOUT = 300_000


@pytest.fixture(scope="module")
def big() -> str:
    return str(big_program())


def test_ten_thousand_nodes_open_collapsed_and_find_reveals_deep_nodes(qtbot, big: str) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(interactive=False)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(big)
    doc = blocker.args[0]
    nodes = doc.model.program.graph.nodes
    assert len(nodes) > 9000
    shown = len(doc.view.nodes) + len(doc.view.groups)
    assert shown < 700, "a big program must open collapsed to module groups"
    assert any(not g.box.expanded for g in doc.view.groups.values())
    # Every layout request was small: no group lays out more than a few hundred items at once.
    scene = doc.model.level.scene
    assert max(len(r.positions) for r in scene.layouts.values()) <= 400
    # Find a node deep inside a collapsed layer and jump to it.
    target = next(n.name for n in nodes if n.module_path.startswith("layers.120."))
    assert target not in doc.view.nodes
    doc.find.setText(f"^{target}$")
    qtbot.waitUntil(lambda: doc.model.matches == [target], timeout=TIMEOUT)
    doc.find.returnPressed.emit()
    qtbot.waitUntil(lambda: target in doc.view.nodes and doc.model.selection == target, timeout=TIMEOUT)
    assert doc.view.groups["layers.120"].box.expanded
    # Collapse everything again: the top-level modules (135 layers and the final norm) and the loose nodes.
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.collapse_all()
    assert len(doc.view.nodes) + len(doc.view.groups) < 160
    assert not any(g.box.expanded for g in doc.view.groups.values())
