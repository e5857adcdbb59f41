"""The document tab's contracts on the bundled example (a real transformer export with a cond and two symbolic dims):
every side panel is a `Panel` wired the same way, the view follows the document model's events whoever changes it,
and the window says whether dialogs may be shown (`interactive`) instead of panels asking the window."""
from __future__ import annotations

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.core.graph.highlight_state import HighlightState
from tests.programs import REPO_ROOT

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
TIMEOUT = 60_000


def open_example(qtbot, window: MainWindow) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(EXAMPLE))
    doc = blocker.args[0]
    assert isinstance(doc, DocumentWidget)
    return doc


def states(doc: DocumentWidget, *names: str) -> list[HighlightState]:
    return [doc.view.nodes[n].state for n in names]


def test_the_view_follows_the_model_whoever_changes_it(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_example(qtbot, window)
    doc.model.select("linear")  # straight on the model, as a comparison does: no widget method asked to repaint
    assert states(doc, "linear", "layer_norm", "split") == [HighlightState.SELECTED, HighlightState.NEIGHBOUR,
                                                            HighlightState.NEIGHBOUR]
    doc.model.marked = ["split"]
    assert states(doc, "split") == [HighlightState.MATCH]
    doc.model.select(None)
    doc.model.marked = []
    assert set(states(doc, "linear", "layer_norm", "split")) == {HighlightState.NONE}
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.model.enter_subgraph("cond", "true_graph_0")  # a level change redraws
    assert "cond" not in doc.view.nodes and doc.breadcrumb.row.count() > 1


def test_a_symbol_is_shown_through_the_symbols_panel(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_example(qtbot, window)
    assert all(isinstance(p, Panel) for p in doc.panel_widgets.values())
    with qtbot.waitSignal(doc.symbols_panel.nodes_highlighted, timeout=TIMEOUT) as blocker:
        assert doc.show_symbol("no_such_symbol", stands_for="tokens.shape[0]")  # found by the input dim it stands for
    assert doc.panels.currentWidget() is doc.symbols_panel
    row = doc.symbols_panel.tree.currentItem().text(0)
    assert row == "s52" and doc.model.marked == blocker.args[0] and len(doc.model.marked) == 52
    shown = [n for n in doc.model.marked if n in doc.view.nodes]
    assert shown and all(doc.view.nodes[n].state is HighlightState.MATCH for n in shown)
    assert not doc.show_symbol("s99")


def test_a_test_window_passes_interactive_down_to_every_run_panel(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_example(qtbot, window)
    assert window.interactive is False and doc.interactive is False and doc.run_panel.interactive is False


def test_the_window_asks_every_tab_the_same_questions(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_example(qtbot, window)
    tab = window.current_tab()
    assert tab is doc and tab.current_program() is doc and tab.graphs() == [doc]
    assert tab.program_file() == str(EXAMPLE) and window.save_action.isEnabled()
    assert not window.save_decomposed_action.isEnabled()
    window.compare_with(doc, doc.model.archive, doc.model.program)
    qtbot.waitUntil(lambda: isinstance(window.current_tab(), CompareView), timeout=TIMEOUT)  # built off the GUI thread
    view = window.current_tab()
    assert isinstance(view, CompareView)
    assert view.graphs() == [view.left, view.right] and window.view_document() is view.left
    assert window.current_document() is None and view.program_file() is None
    view.right.view.setFocus()
    qtbot.waitUntil(lambda: window.view_document() is view.right, timeout=TIMEOUT)  # the graph holding the focus
    assert not window.save_action.isEnabled() and not window.save_decomposed_action.isEnabled()
