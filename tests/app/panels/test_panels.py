"""The side panels on a real exported program, driven with real mouse clicks (pytest-qt, offscreen).

Each panel gets the program the way the document widget gives it (`set_program(program, graph, index)`), then the
test clicks what a user would click and checks the signal the panel sends, or selects a node elsewhere and checks the
panel follows without sending anything back. Set PT2V_PANEL_SHOTS=DIR to keep a screenshot of each panel.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QTreeWidget, QTreeWidgetItem, QWidget

from pt2_viewer.app.panels.code import CodePanel
from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.app.panels.signature import SignaturePanel
from pt2_viewer.app.panels.summary import SummaryPanel
from pt2_viewer.app.panels.symbols import SymbolsPanel
from pt2_viewer.app.widgets.source_view import SourceView, open_source
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.readable import readable_code
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.pt2.reader import read_archive
from tests.core.graph.test_readable import MODEL_LINES, PanelsProgram, panels_program  # noqa: F401  (panels_program: fixture)


@pytest.fixture
def loaded(panels_program: PanelsProgram) -> tuple[Archive, Program, GraphIndex]:
    archive = read_archive(panels_program.path)
    program = archive.programs[0]
    return archive, program, GraphIndex(program.graph)


def _show(qtbot, widget: QWidget) -> QWidget:  # type: ignore[no-untyped-def]
    qtbot.addWidget(widget)
    widget.resize(560, 680)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _click_item(qtbot, tree: QTreeWidget, item: QTreeWidgetItem, column: int = 0) -> None:  # type: ignore[no-untyped-def]
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    x = tree.header().sectionViewportPosition(column) + 4
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, rect.center().y()))


def _find(tree: QTreeWidget, text: str, column: int = 0) -> QTreeWidgetItem:
    [item] = tree.findItems(text, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive, column)
    return item


def test_signature_row_click_selects_its_node(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    _, program, index = loaded
    panel = _show(qtbot, SignaturePanel())
    panel.set_program(program, program.graph, index)
    with qtbot.waitSignal(panel.node_requested) as sig:
        _click_item(qtbot, panel.tree, _find(panel.tree, "getitem_2"))
    assert sig.args == ["topk"]  # an output selects the node that produced it
    with qtbot.waitSignal(panel.node_requested) as sig:
        _click_item(qtbot, panel.tree, _find(panel.tree, "x"), column=3)
    assert sig.args == ["x"]
    weight = _find(panel.tree, "p_lin_weight")
    assert [weight.text(i) for i in range(5)] == ["p_lin_weight", "PARAMETER", "lin.weight", "float32", "[3, 4]"]
    with qtbot.assertNotEmitted(panel.node_requested):
        panel.show_node("topk")
    assert sorted(i.text(0) for i in panel.tree.selectedItems()) == ["getitem_1", "getitem_2"]


def test_symbol_click_highlights_the_nodes_using_it(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    _, program, index = loaded
    panel = _show(qtbot, SymbolsPanel())
    panel.set_program(program, program.graph, index)
    u0 = _find(panel.tree, "u0")
    assert [u0.text(i) for i in range(6)] == ["u0", "[0, 192]", "unbacked", "—", "", "u0 >= 0; u0 <= 192"]
    with qtbot.waitSignal(panel.nodes_highlighted) as sig:
        _click_item(qtbot, panel.tree, u0)
    assert sig.args == [["nonzero", "sym_size_int_1", "ge", "le"]]
    with qtbot.waitSignal(panel.nodes_highlighted) as sig:
        _click_item(qtbot, panel.tree, _find(panel.tree, "s77"), column=3)
    assert sig.args == [["x", "linear", "batch_norm", "cond", "gt_1", "topk"]]
    panel.show_node("linear")
    assert [(i.text(0), i.font(0).bold()) for i in (panel.tree.topLevelItem(0), panel.tree.topLevelItem(1))] == [
        ("s77", True), ("u0", False)]


def test_code_view_follows_the_selection_and_leads_it(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    _, program, index = loaded
    panel = _show(qtbot, CodePanel())
    panel.set_program(program, program.graph, index)
    code = readable_code(program)
    with qtbot.assertNotEmitted(panel.node_requested):
        panel.show_node("batch_norm")
    assert panel.cursor_line() == code.line_of_node["batch_norm"]
    assert panel.editor.textCursor().block().text().strip().startswith('batch_norm: "f32[s77, 3]" = ')
    # clicking topk's second getitem line asks for topk, the one node behind all three lines
    line = code.line_of_node["topk"] + 2
    block = panel.editor.document().findBlockByNumber(line)
    assert block.text().strip() == 'getitem_2: "i64[s77, 2]" = topk[1]'
    point = panel.editor.cursorRect(QTextCursor(block)).center()
    with qtbot.waitSignal(panel.node_requested) as sig:
        qtbot.mouseClick(panel.editor.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert sig.args == ["topk"]
    assert panel.cursor_line() == line
    # inside a branch the panel shows that graph and maps its own nodes
    branch = program.graph.node_by_name["cond"].subgraphs[0]
    panel.set_program(program, branch, GraphIndex(branch))
    panel.show_node("sin")
    assert panel.editor.textCursor().block().text().strip().startswith('sin: "f32[s77, 3]"')


def test_details_links_and_user_frame_first(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    _, program, index = loaded
    panel = _show(qtbot, DetailsPanel())
    panel.set_program(program, program.graph, index)
    panel.show_node("topk")
    self_arg = panel.row_items("Arguments")[0]
    assert (self_arg.text(0), self_arg.text(1)) == ("self", "getitem  (output of cond)")
    with qtbot.waitSignal(panel.node_requested) as sig:
        _click_item(qtbot, panel.tree, self_arg, column=1)
    assert sig.args == ["cond"]  # the producer link
    frames = panel.row_items("Stack trace")
    assert frames[0].text(1) == MODEL_LINES["topk"]
    assert frames[0].text(0).startswith("test_readable.py:")
    with qtbot.waitSignal(panel.source_requested) as sig:
        _click_item(qtbot, panel.tree, frames[0], column=1)
    file, line = sig.args
    assert Path(file).name == "test_readable.py" and Path(file).read_text().splitlines()[line - 1].strip() == \
        MODEL_LINES["topk"]
    # library frames come after the user's, greyed
    panel.show_node("linear")
    frames = panel.row_items("Stack trace")
    assert frames[0].text(1) == MODEL_LINES["lin_bn"] and frames[1].text(0) == "linear.py:134"
    assert frames[1].foreground(0).color() != frames[0].foreground(0).color()
    # a HOP links to its branches
    panel.show_node("cond")
    branches = panel.row_items("Subgraphs")
    assert [b.text(0) for b in branches] == ["true_fn", "false_fn"]
    with qtbot.waitSignal(panel.subgraph_requested) as sig:
        _click_item(qtbot, panel.tree, branches[1], column=1)
    assert sig.args == ["cond", "false_graph_0"]
    # clicking a row without a link sends nothing; an unknown node clears the panel
    with qtbot.assertNotEmitted(panel.node_requested), qtbot.assertNotEmitted(panel.subgraph_requested):
        _click_item(qtbot, panel.tree, panel.row_items("Operator")[0], column=1)
    # nothing selected (or an unknown node): the program's properties, its inputs linking to their nodes
    panel.show_node("no_such_node")
    sections = [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
    assert sections[:4] == ["Program", "Inputs", "Outputs", "Weights"] and "Select a node" in panel.title.text()
    first_input = panel.row_items("Inputs")[0]
    with qtbot.waitSignal(panel.node_requested) as sig:
        _click_item(qtbot, panel.tree, first_input, column=1)
    assert sig.args == [first_input.text(0)] and first_input.text(0) in program.graph.node_by_name


def test_source_view_opens_at_the_frame_line(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    _, program, _ = loaded
    frame = program.graph.node_by_name["nonzero"].user_frame
    assert frame is not None
    parent = _show(qtbot, QWidget())
    view = open_source(frame.file, frame.line, parent)
    qtbot.waitExposed(view)
    assert view.current_line() == frame.line
    assert view.editor.textCursor().block().text().strip() == MODEL_LINES["nonzero"]
    assert view.editor.isReadOnly() and view.highlighter is not None
    assert len(view.editor.extraSelections()) == 1  # the line is marked
    assert open_source(frame.file, 1, parent) is view  # one window per parent, reused
    assert view.current_line() == 1


def test_source_view_explains_a_missing_file(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = _show(qtbot, SourceView())
    assert not view.open_source(str(tmp_path / "exported_elsewhere.py"), 12)
    assert view.message.isVisible() and not view.editor.isVisible()
    assert "is not on this machine" in view.message.text() and "exported_elsewhere.py" in view.message.text()
    assert not view.open_source("<eval_with_key>.5", 9)
    assert "code torch generated" in view.message.text()
    assert not view.open_source(str(tmp_path), 1)
    assert "not a regular file" in view.message.text()


def test_summary_facts_and_histogram_click(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    archive, program, index = loaded
    panel = _show(qtbot, SummaryPanel())
    panel.set_program(program, program.graph, index, archive=archive)
    facts = {panel.facts.topLevelItem(i).text(0): panel.facts.topLevelItem(i).text(1)
             for i in range(panel.facts.topLevelItemCount())}
    assert facts["torch"] == program.torch_version and facts["dialect"] == "TRAINING"
    assert facts["weights"] == "7 tensors, 116 B, 28 elements"
    hist = panel.histogram
    row = [c.op for c in hist.counts].index("aten.gt.Scalar")
    with qtbot.waitSignal(panel.nodes_highlighted) as sig:
        qtbot.mouseClick(hist, Qt.MouseButton.LeftButton, pos=hist.row_rect(row).center().toPoint())
    assert sig.args == [["gt", "gt_1"]]
    assert not panel.notes.isVisible()  # no warnings for a program this torch wrote


def test_screenshots_have_content(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    archive, program, index = loaded
    shots = os.environ.get("PT2V_PANEL_SHOTS")
    for name, panel, node in (("details", DetailsPanel(), "linear"), ("code", CodePanel(), "batch_norm"),
                              ("signature", SignaturePanel(), "topk"), ("symbols", SymbolsPanel(), "nonzero"),
                              ("summary", SummaryPanel(), None)):
        _show(qtbot, panel)
        if isinstance(panel, SummaryPanel):
            panel.set_program(program, program.graph, index, archive=archive)
        else:
            panel.set_program(program, program.graph, index)
        panel.show_node(node)
        QApplication.processEvents()  # let the layouts settle before the picture
        image = panel.grab().toImage()
        colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
        assert len(colours) > 4, name  # text and fills, not a blank widget
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            assert panel.grab().save(str(Path(shots) / f"panels_{name}.png"))


def test_details_follows_what_changes_under_the_same_node(qtbot, loaded) -> None:  # type: ignore[no-untyped-def]
    """Details draws a node once when a panel is filled (set_context, then show_node of the same node), and again
    whenever what it shows changes under that node: a measure arriving or going, a script's names for its dims."""
    from pt2_viewer.core.graph.overlays import Overlay

    archive, program, index = loaded
    panel = _show(qtbot, DetailsPanel())
    panel.set_program(program, program.graph, index, archive=archive)
    op = next(n.name for n in program.graph.nodes if n.op.value == "call_function")
    panel.show_node(op)
    panel.show_node(op)
    assert panel.tree.findItems("Run time", Qt.MatchFlag.MatchExactly) == []
    panel.set_measure("Run time", Overlay("Run time", texts={op: "1.5 ms"}))
    assert len(panel.tree.findItems("Run time", Qt.MatchFlag.MatchExactly)) == 1
    panel.show_node(op)  # the same node again: nothing to redraw, the measure stays
    assert len(panel.tree.findItems("Run time", Qt.MatchFlag.MatchExactly)) == 1
    panel.set_measure("Run time", None)
    assert panel.tree.findItems("Run time", Qt.MatchFlag.MatchExactly) == []
    symbol = program.symbols[0]  # s77, from x.shape[0]
    panel.show_node(None)
    labelled = Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive
    assert panel.tree.findItems(symbol.name, labelled)
    panel.set_dim_names({symbol.sources[0]: "batch"})
    assert panel.tree.findItems(f"batch ({symbol.name})", labelled)
