"""Issue 30: a group's box said "581 ops", its tooltip "729 nodes" and the report "56 nodes" where the app said
"44 ops": three counts, none saying what it counted. The box, the tooltip and the report say the same count of ops,
and the tooltip says what else the group holds. On a real exported program; offscreen, waits on signals only."""
from __future__ import annotations

from pt2_viewer.app.graph.items import GroupItem
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.report.graph_data import graph_data
from tests.issue30_programs import deep_decoder

TIMEOUT = 60_000


def test_box_tooltip_and_report_count_the_same_ops(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    path = deep_decoder()  # 80 layers: it opens with its layers collapsed
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    doc = blocker.args[0]
    boxes = {i.path: i for i in doc.view.scene().items() if isinstance(i, GroupItem) and not i.box.expanded}
    assert boxes, "the first view shows collapsed groups"
    path_shown, box = sorted(boxes.items())[0]
    group = doc.model.level.scene.groups[path_shown]
    nodes = doc.model.program.graph.node_by_name
    ops = sum(1 for g in group.walk() for n in g.nodes if nodes[n].op.value == "call_function")
    assert box.count_text == f"{ops} ops"
    assert f"({ops} ops; " in box.toolTip() and "nodes with its weights, inputs" in box.toolTip()
    report = graph_data(read_archive(path).program())
    (same,) = [g for g in report.groups if g["path"] == path_shown]
    assert same["count_text"] == box.count_text
