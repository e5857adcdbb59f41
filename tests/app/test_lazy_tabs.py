"""The Run and Numerics tabs are built when first shown (app/document/lazy_tabs.py), so a program's first view does
not wait for them: clicking either tab shows its whole panel in place, under the same title, wired to the graph; the
Code tab colours its Python once shown (pygments is imported then)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from tests.programs import REPO_ROOT

TIMEOUT = 60_000
EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"


@pytest.fixture
def doc(qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> DocumentWidget:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.run.panel import CudaProbe
    from pt2_viewer.core.run.readout import CudaStatus

    monkeypatch.setattr(CudaProbe, "_shared", None)
    CudaProbe.shared().learn(CudaStatus(False, "no CUDA device in this test"))  # known: showing Run asks no worker
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(EXAMPLE))
    document = blocker.args[0]
    assert isinstance(document, DocumentWidget)
    return document


def click_tab(qtbot, doc: DocumentWidget, title: str) -> int:  # type: ignore[no-untyped-def]
    bar = doc.panels.tabBar()
    index = next(i for i in range(doc.panels.count()) if doc.panels.tabText(i) == title)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    return index


def test_run_and_numerics_tabs_are_built_when_clicked_and_show_their_panels(qtbot, doc: DocumentWidget) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.numerics.panel import NumericsPanel
    from pt2_viewer.app.run.panel import RunPanel

    titles = [doc.panels.tabText(i) for i in range(doc.panels.count())]
    assert titles[-2:] == ["Run", "Numerics"]
    assert doc.job_tabs.panels == {}  # the first view built neither

    index = click_tab(qtbot, doc, "Run")
    run = doc.panels.currentWidget()
    assert isinstance(run, RunPanel) and run is doc.run_panel
    assert [doc.panels.tabText(i) for i in range(doc.panels.count())] == titles and doc.panels.currentIndex() == index
    qtbot.waitUntil(run.cpu_button.isVisible)  # the form is there, on screen
    assert not run.cuda_button.isEnabled() and "no CUDA device in this test" in run.cuda_reason.text()

    index = click_tab(qtbot, doc, "Numerics")
    numerics = doc.panels.currentWidget()
    assert isinstance(numerics, NumericsPanel) and numerics is doc.numerics_panel
    assert doc.panels.currentIndex() == index
    qtbot.waitUntil(numerics.compare_button.isVisible)
    assert numerics.candidate.count() > 0
    assert set(doc.job_tabs.panels) == {"Run", "Numerics"}

    # built once: going back to Run shows the same panel, and a node picked in the graph leaves it in front
    click_tab(qtbot, doc, "Run")
    assert doc.panels.currentWidget() is run
    node = next(n.name for n in doc.model.program.graph.nodes if n.op.value == "call_function")
    doc.reveal(node)
    assert doc.panels.currentWidget() is run


def test_a_run_tab_asked_for_before_it_is_shown_is_built_and_wired(qtbot, doc: DocumentWidget) -> None:  # type: ignore[no-untyped-def]
    node = next(n.name for n in doc.model.program.graph.nodes if n.op.value == "call_function")
    doc.run_panel.heat_changed.emit({node: 2e-3})  # what a finished run sends: the graph is tinted by time
    assert doc.tools.overlay_name == "Run time"
    assert doc.panels.currentWidget() is not doc.run_panel  # built, not brought to the front
    doc.show_run_panel()
    assert doc.panels.currentWidget() is doc.run_panel


def test_the_code_tab_colours_its_python_once_shown(qtbot, doc: DocumentWidget) -> None:  # type: ignore[no-untyped-def]
    code = doc.panel_widgets["Code"]
    assert code.highlighter is None  # type: ignore[attr-defined]
    click_tab(qtbot, doc, "Code")
    assert "def forward" in code.editor.toPlainText()  # type: ignore[attr-defined]
    assert code.highlighter is not None  # type: ignore[attr-defined]


def test_the_side_panels_but_details_are_built_when_first_shown(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Signature, Symbols, Code and Summary are placeholders until their tab is shown (or code asks for them); then
    the panel takes the placeholder's place, filled with the program, and follows the selection from then on."""
    from pt2_viewer.app.panels.panel import Panel
    from tests.app.graph.test_graph_tools import EXAMPLE, open_and_wait

    doc = open_and_wait(qtbot, window, EXAMPLE)
    titles = [doc.panels.tabText(i) for i in range(doc.panels.count())]
    assert titles[:5] == ["Details", "Signature", "Symbols", "Code", "Summary"]
    assert set(doc.panel_widgets.built) == {"Details"}
    assert not any(isinstance(doc.panels.widget(i), Panel) for i in range(1, 5)), "placeholders"
    doc.panels.setCurrentIndex(titles.index("Signature"))
    signature = doc.panels.currentWidget()
    assert isinstance(signature, Panel) and doc.panel_widgets["Signature"] is signature
    assert signature.tree.topLevelItemCount() > 0, "filled with the program when shown"
    assert doc.panels.tabText(doc.panels.currentIndex()) == "Signature"
    node = next(n.name for n in doc.model.program.graph.nodes if n.op.value == "call_function")
    doc.select(node)  # a built panel follows the selection; Details comes to the front
    assert doc.panels.currentWidget() is doc.panel_widgets["Details"]
    assert doc.symbols_panel is doc.panel_widgets["Symbols"] and "Symbols" in doc.panel_widgets.built
