"""The everyday tools of a graph, through the real window: arrow keys walk producers and users, Alt+Left/Right go
back and forward through selections and subgraph drills, the right-click menu, find by shape or symbol with op and
module in the results, and overlays (dtype, parameter bytes, a user's JSON, a run's time) with a legend."""
from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.graph.highlight_state import HighlightState
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (fixture)

TIMEOUT = 240_000
EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
ALT = Qt.KeyboardModifier.AltModifier


def open_and_wait(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    return blocker.args[0]


def view_menu(window: MainWindow, text: str):  # type: ignore[no-untyped-def]
    menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "&View")
    return next(a for a in menu.actions() if a.text() == text)


def at(doc: DocumentWidget, node: str) -> QPoint:
    """The middle of a node's own lines (above the rows of weights folded into its box)."""
    doc.view.center_on_item(node)
    item = doc.view.nodes[node]
    return doc.view.mapFromScene(item.mapToScene(item.head.center()))


def click(qtbot, doc: DocumentWidget, node: str) -> None:  # type: ignore[no-untyped-def]
    qtbot.mouseClick(doc.view.viewport(), Qt.MouseButton.LeftButton, pos=at(doc, node))


def key(qtbot, k: Qt.Key, mod=Qt.KeyboardModifier.NoModifier) -> None:  # type: ignore[no-untyped-def]
    qtbot.keyClick(QApplication.focusWidget(), k, mod)


def test_arrow_keys_and_back_forward(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    window.activateWindow()
    click(qtbot, doc, "matmul")
    doc.view.setFocus()
    qtbot.waitUntil(lambda: doc.view.hasFocus())
    assert doc.model.selection == "matmul"
    key(qtbot, Qt.Key.Key_Down)  # matmul -> relu (its user)
    assert doc.model.selection == "relu" and doc.view.nodes["relu"].state == HighlightState.SELECTED
    key(qtbot, Qt.Key.Key_Down)
    assert doc.model.selection == "add"
    key(qtbot, Qt.Key.Key_Up)  # add's first producer that is not a hub
    assert doc.model.selection in ("relu", "sym_size_int_1")
    up = doc.model.selection
    key(qtbot, Qt.Key.Key_Left, ALT)
    assert doc.model.selection == "add"
    key(qtbot, Qt.Key.Key_Left, ALT)
    assert doc.model.selection == "relu"
    key(qtbot, Qt.Key.Key_Right, ALT)
    assert doc.model.selection == "add"
    key(qtbot, Qt.Key.Key_Right, ALT)
    assert doc.model.selection == up
    assert not doc.tools.history.can_go_forward()
    # Siblings: x's users are sym_size and matmul; Left/Right moves between them.
    click(qtbot, doc, "matmul")
    doc.view.setFocus()
    key(qtbot, Qt.Key.Key_Up)
    assert doc.model.selection == "x"
    key(qtbot, Qt.Key.Key_Right)
    assert doc.model.selection == "y"  # the graph's inputs are siblings too


def test_up_passes_over_a_weight_folded_into_the_op(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    """BERT's word embedding takes its weight first; the weight is a row of the embedding's box, so Up goes to the
    input_ids it looks up (the row is still selected by a click)."""
    doc = open_and_wait(qtbot, window, pt2_path("hf_tiny_bert"))
    window.activateWindow()
    doc.reveal("embedding")
    qtbot.waitUntil(lambda: doc.ready and not doc.laying_out and "embedding" in doc.view.nodes, timeout=TIMEOUT)
    click(qtbot, doc, "embedding")
    doc.view.setFocus()
    qtbot.waitUntil(lambda: doc.view.hasFocus())
    assert doc.model.selection == "embedding"
    key(qtbot, Qt.Key.Key_Up)
    assert doc.model.selection == "input_ids"
    weight = "p_embeddings_word_embeddings_weight"
    qtbot.mouseClick(doc.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=doc.view.mapFromScene(doc.view.nodes[weight].sceneBoundingRect().center()))
    assert doc.model.selection == weight
    key(qtbot, Qt.Key.Key_Down)
    assert doc.model.selection == "embedding"


def test_back_and_forward_through_subgraph_drills(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    cond = next(n for n in doc.model.program.graph.nodes if n.target.endswith("higher_order.cond"))
    click(qtbot, doc, cond.name)
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.enter_subgraph(cond.name, "true_graph_0")
    inner = doc.model.level.graph.nodes[-2].name
    click(qtbot, doc, inner)
    back, forward = view_menu(window, "&Back"), view_menu(window, "For&ward")
    assert back.shortcut().toString() == "Alt+Left" and forward.shortcut().toString() == "Alt+Right"
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        back.trigger()
    assert len(doc.model.levels) == 1 and doc.model.selection == cond.name
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        forward.trigger()
    assert doc.model.level.graph.name == "true_graph_0"
    qtbot.waitUntil(lambda: doc.model.selection == inner)


def test_right_click_menu(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("attention_blocks"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()  # it opens at a module level: its linears are inside the attention blocks
    node = next(n.name for n in doc.model.level.graph.nodes if n.op_name == "linear" and n.name in doc.view.nodes)
    pos = at(doc, node)
    qtbot.mouseClick(doc.view.viewport(), Qt.MouseButton.RightButton, pos=pos)  # a press selects, as in any view
    doc.view.contextMenuEvent(_context_event(doc, pos))
    menu = doc.menu
    assert menu is not None and doc.model.selection == node
    actions = {a.text().split(" (")[0]: a for a in menu.actions() if a.text()}
    assert {"Copy Name", "Copy Target", "Copy Shape", "Show in Code", "Find Users"} <= set(actions)
    assert any(t.startswith("Collapse Group '") for t in actions)
    actions["Copy Target"].trigger()
    assert QApplication.clipboard().text() == "torch.ops.aten.linear.default"
    actions["Copy Shape"].trigger()
    assert QApplication.clipboard().text() == doc.model.level.index.output_types[node]
    actions["Find Users"].trigger()
    users = doc.model.level.index.users[node]
    assert users and all(doc.view.nodes[u].state == HighlightState.MATCH for u in users if u in doc.view.nodes)
    actions["Show in Code"].trigger()
    assert doc.panels.currentWidget() is doc.panel_widgets["Code"]
    menu.close()
    group = next(a for t, a in actions.items() if t.startswith("Collapse Group '"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        group.trigger()
    assert node not in doc.view.nodes


def _context_event(doc: DocumentWidget, pos: QPoint):  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QContextMenuEvent

    return QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, doc.view.viewport().mapToGlobal(pos))


def test_find_by_shape_and_symbol_says_op_and_module(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    qtbot.keyClicks(doc.find, "s17")
    qtbot.waitUntil(lambda: doc.results.count() == 2)
    texts = [doc.results.item(i).text() for i in range(doc.results.count())]
    assert texts[0].startswith("x  ·  placeholder") and "f32[s77, s17]" in texts[0]
    doc.find.clear()
    qtbot.keyClicks(doc.find, "f32[")
    qtbot.waitUntil(lambda: doc.results.count() == 5)
    assert any(t.startswith("matmul  ·  matmul") for t in (doc.results.item(i).text() for i in range(5)))


def test_overlays_with_legend(qtbot, window: MainWindow, pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("attention_blocks"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()  # its weights are rows of the linears inside the attention blocks
    menu = view_menu(window, "&Overlay").menu()
    menu.aboutToShow.emit()
    names = [a.text() for a in menu.actions() if a.text()]
    assert names[:3] == ["None (kind colours)", "dtype", "Parameter bytes"]
    assert names[-1] == "Load Per-Node Values (JSON)…"
    next(a for a in menu.actions() if a.text() == "Parameter bytes").trigger()
    weight = doc.view.nodes["p_blocks_0_attn_in_proj_weight"]
    assert doc.tools.legend.isVisible() and weight.overlay_fill is not None
    assert "Parameter bytes: 3.0 KB" in weight.toolTip()
    assert weight.kind_fill != weight.overlay_fill  # the kind colour stays, as a stripe
    # The legend's × brings the kind colours back.
    doc.tools.legend.close_button.click()
    assert not doc.tools.legend.isVisible() and weight.overlay_fill is None
    # A user's JSON; a run's per-node time.
    f = tmp_path / "error.json"
    f.write_text(json.dumps({"p_blocks_0_attn_in_proj_weight": 1e-3, "x": 2.0, "no_such_node": 1}))
    doc.tools.load_overlay(str(f))
    assert doc.tools.overlay_name == "error" and doc.tools.legend.overlay.notes
    assert doc.view.nodes["x"].overlay_fill != weight.overlay_fill
    doc.run_panel.heat_changed.emit({"x": 1.0})  # seconds per node
    assert doc.tools.overlay_name == "Run time"
    menu.aboutToShow.emit()
    assert {"error", "Run time"} <= {a.text() for a in menu.actions()}
    next(a for a in menu.actions() if a.text().startswith("None")).trigger()
    assert weight.overlay_fill is None and not doc.tools.legend.isVisible()


def test_overlays_aggregate_over_collapsed_groups(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    """Collapsed, a big model's groups carry the overlay: the sum of their parameter bytes (or a run's time) or the
    largest error, painted on the group, in its tooltip, and the legend's range for the groups shown."""
    doc = open_and_wait(qtbot, window, pt2_path("attention_blocks"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.collapse_all()
    collapsed = [g for g in doc.view.groups.values() if not g.box.expanded]
    assert collapsed
    doc.tools.show_overlay("Parameter bytes")
    painted = [g for g in collapsed if g.fill != g.own_fills[0]]
    assert painted, "a collapsed group holding ops that read weights is coloured"
    g = painted[0]
    assert "Parameter bytes: sum " in g.toolTip() and " KB over " in g.toolTip()
    assert doc.tools.legend.group_note.startswith("groups: sum of their nodes, ")
    doc.tools.show_overlay(None)
    assert all(g.fill == g.own_fills[0] for g in collapsed) and "Parameter bytes" not in g.toolTip()


def test_run_time_legend_gives_times_and_details_lists_them(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    doc.run_panel.heat_changed.emit({"x": 2e-5, "matmul": 3e-3})  # a run's per-node seconds
    assert doc.tools.overlay_name == "Run time" and [i.label for i in doc.tools.legend.overlay.legend] == [
        "fastest 20.0 µs", "slowest 3.00 ms"]
    doc.select("matmul")  # Details lists the run's time under the node's op
    rows = doc.panel_widgets["Details"].row_items("Run time")
    assert [r.text(1) for r in rows] == ["3.00 ms (100% of the slowest)"]
    doc.run_panel.heat_changed.emit({})
    assert doc.tools.overlay_name is None and not doc.panel_widgets["Details"].row_items("Run time")


def test_find_says_it_searched_literally_and_goes_through_its_matches(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    statuses: list[str] = []
    doc.status.connect(statuses.append)
    qtbot.keyClicks(doc.find, "f32[")  # not a regex: matched literally, said so, and not in an error colour
    qtbot.waitUntil(lambda: doc.results.count() == 5)
    assert doc.find.styleSheet() == "" and doc.find.toolTip().startswith("Searched literally: 'f32[' is not a regex")
    assert statuses[-1].startswith("5 matches for 'f32[', searched literally (as a regex: ")
    row = doc.results.sizeHintForRow(0)
    assert doc.results.height() <= 5 * row + 12  # as tall as its matches
    # a result reveals its node and zooms to it; next and previous go through the others
    doc.view.resetTransform()
    doc.view.scale(0.05, 0.05)
    item = doc.results.item(1)
    qtbot.mouseClick(doc.results.viewport(), Qt.MouseButton.LeftButton, pos=doc.results.visualItemRect(item).center())
    node = item.data(Qt.ItemDataRole.UserRole)
    assert doc.model.selection == node and doc.view.transform().m11() >= 0.8
    shown = doc.view.mapToScene(doc.view.viewport().rect()).boundingRect()
    assert shown.contains(doc.view.nodes[node].sceneBoundingRect().center())
    bar = doc.tools.step_bar
    assert bar.isVisible() and bar.label.text() == "'f32[' (literally): 2 of 5"
    bar.next.click()
    assert doc.model.selection == doc.model.matches[2] and bar.label.text().endswith("3 of 5")
    bar.previous.click()
    bar.previous.click()
    assert doc.model.selection == doc.model.matches[0]
    doc.find.clear()
    qtbot.keyClicks(doc.find, "matmul")
    qtbot.waitUntil(lambda: statuses[-1].endswith("for 'matmul'"))
    assert doc.results.height() <= doc.results.count() * row + 12 and not bar.isVisible()


def test_help_lists_the_keyboard_shortcuts(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    help_menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "&Help")
    next(a for a in help_menu.actions() if a.text() == "&Keyboard Shortcuts").trigger()
    tree = window.shortcuts.tree
    rows = {tree.topLevelItem(i).text(1): tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())}
    assert rows["View › Find"] == "Ctrl+F" and rows["View › Next Match"] == "F3"
    assert rows["View › Back"] == "Alt+Left" and rows["File › Open"] == "Ctrl+O"
    assert any(what.startswith("Graph: select a producer") for what in rows)
    assert window.shortcuts.isVisible()


def test_marks_go_away_and_never_reach_an_export(qtbot, window: MainWindow, pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Summary → an op marks its nodes with a step bar through them; closing the bar or clicking the background
    takes the red outlines away, and an export never shows the selection or the marks."""
    from PySide6.QtGui import QImage

    from pt2_viewer.app.graph.export_image import export_scene

    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    clean = tmp_path / "clean.png"
    export_scene(doc.view.scene(), str(clean))
    summary = doc.panel_widgets["Summary"]
    doc.panels.setCurrentWidget(summary)
    summary._op_clicked("aten.matmul.default")
    assert doc.model.marked == ["matmul"] and doc.view.nodes["matmul"].state == HighlightState.MATCH
    bar = doc.tools.step_bar
    assert bar.isVisible() and bar.label.text() == "marked: 1 node"
    bar.next.click()  # to the node: selected, the mark kept while the bar is up
    assert doc.model.selection == "matmul"
    marked = tmp_path / "marked.png"
    with doc.view.plain():
        export_scene(doc.view.scene(), str(marked))
    assert doc.view.nodes["matmul"].state == HighlightState.SELECTED  # back after the export
    assert QImage(str(marked)) == QImage(str(clean))
    doc.view.background_clicked.emit()
    assert doc.model.marked == [] and not bar.isVisible()
    assert all(i.state == HighlightState.NONE for i in doc.view.nodes.values())
    summary._op_clicked("aten.relu.default")
    bar.close_button.click()
    assert doc.model.marked == [] and doc.view.nodes["relu"].state == HighlightState.NONE


def test_node_tooltips_say_target_module_type_and_users(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    doc.tools.show_overlay("dtype")
    text = doc.view.tooltip_text(doc.view.nodes["matmul"])
    assert text.splitlines()[:3] == ["matmul  ·  aten.matmul.default", "output: f32[s77, s94]", "1 user: relu"]
    assert text.splitlines()[-1] == "dtype: float32"  # the overlay's figure stays
    assert "\nmatmul\n" not in f"\n{text}\n"  # not the label again on a line of its own


def test_panel_tabs_keep_their_titles_whole_in_a_narrow_tab(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    """A script's tab gives the program's panels a narrow column and elides tab titles that do not fit
    (app/widgets/common.fit_tabs): the column is kept wide enough that none has to."""
    from pt2_viewer.app.widgets.common import fit_tabs

    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    fit_tabs(doc.panels)
    window.resize(1000, 800)
    qtbot.waitUntil(lambda: window.width() <= 1000)
    bar = doc.panels.tabBar()
    qtbot.waitUntil(lambda: bar.tabRect(bar.count() - 1).right() > 0)
    assert all(bar.tabRect(i).width() >= bar.tabSizeHint(i).width() for i in range(bar.count()))
    assert bar.tabText(0) == "Details"
