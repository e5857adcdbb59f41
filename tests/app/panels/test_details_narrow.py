"""A narrow Details (a comparison's, at 1280x800) never draws a value past its edge: its columns fit the panel, so a
value too long is cut with "…" (issue 43 §4: "torch.ops.aten.re" ran off the panel's edge with no sign it went on).
On the bundled example (a real export)."""
from __future__ import annotations

from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT


def test_a_narrow_details_keeps_its_columns_inside(qtbot) -> None:  # type: ignore[no-untyped-def]
    archive = read_archive(REPO_ROOT / "resources" / "examples" / "example.pt2")
    program = archive.program()
    panel = DetailsPanel()
    qtbot.addWidget(panel)
    panel.set_program(program, program.graph, GraphIndex(program.graph), archive=archive)
    node = next(n.name for n in program.graph.nodes if n.target.endswith("linear.default"))
    for width in (190, 260, 420):
        panel.resize(width, 500)
        panel.show()
        qtbot.waitExposed(panel)
        panel.show_node(node)
        tree = panel.tree
        first_two = tree.columnWidth(0) + tree.columnWidth(1)
        assert first_two <= tree.viewport().width(), (width, first_two, tree.viewport().width())
