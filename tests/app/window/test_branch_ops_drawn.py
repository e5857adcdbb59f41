"""Issue 30: a `cond` branch whose only op is `sin` was drawn as "_export_root: Bad1Fixed", the op hidden behind
the name strict export gives the root module inside a branch. The root is no module of its own: the branch draws
`sin`; a real submodule called in a branch keeps its group (`lin: Linear`). Offscreen; waits on signals only."""
from __future__ import annotations

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from tests.issue30_programs import strict_cond_branches

TIMEOUT = 60_000


def open_branch(qtbot, window: MainWindow, program: str, branch: str) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(strict_cond_branches()), program=program)
    doc = blocker.args[0]
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.enter_subgraph("cond", branch)
    return doc


def test_a_one_op_branch_draws_its_op(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_branch(qtbot, window, "bad1_fixed", "true_graph_0")
    titles = {name: item.title for name, item in doc.view.nodes.items()}
    assert titles["sin"] == "sin", titles
    assert not any("_export_root" in t for t in titles.values())
    assert not doc.model.level.scene.leaves  # no module of one op: the root is none
    details = doc.panel_widgets["Details"]
    doc.select("sin")
    module_rows = [(r.text(0), r.text(1)) for r in details.row_items("Module")]
    assert not any("_export_root" in label for label, _ in module_rows), module_rows


def test_a_module_called_in_a_branch_keeps_its_name(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_branch(qtbot, window, "branch_with_module", "true_graph_0")
    assert doc.model.level.scene.leaves == {"lin": "linear"}
    assert doc.view.nodes["linear"].title == "lin: Linear"
    assert doc.view.nodes["sin"].title == "sin"
