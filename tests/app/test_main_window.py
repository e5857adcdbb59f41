"""The window on real exported programs: open by every route, search, expand and collapse, drill into a subgraph and
back, bad files, and `--screenshot`. Offscreen; every wait is on a signal or a condition, never on time."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QPlainTextEdit

from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.items import GroupItem
from pt2_viewer.app.main import take_screenshot
from pt2_viewer.app.main_window import MainWindow
from tests.aoti_package import aoti_package  # noqa: F401  (a fixture)
from tests.app.drag_and_drop import drag_enter_accepted, drop
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
TIMEOUT = 60_000



def open_and_wait(qtbot, window: MainWindow, path: Path, **kw) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path), **kw)
    doc = blocker.args[0]
    assert isinstance(doc, DocumentWidget)
    return doc


def test_open_from_the_menu_shows_every_node(qtbot, window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(EXAMPLE), ""))
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_dialog()
    doc = blocker.args[0]
    assert window.tabs.count() == 1 and window.tabs.tabText(0) == "example.pt2"
    assert set(doc.view.nodes) == {n.name for n in doc.model.program.graph.nodes}
    qtbot.waitUntil(lambda: doc.view.painted > 0, timeout=TIMEOUT)
    # Open Recent now offers the file, and reopening it from there shows its tab, not a second one (issue 43 §5).
    assert window.recent()[0] == str(EXAMPLE)
    action = window.recent_menu.actions()[0]
    assert action.text() == str(EXAMPLE)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as again:
        action.trigger()
    assert window.tabs.count() == 1 and again.args[0] is doc


def test_drop_opens_the_file(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    mime = drag_enter_accepted(window, EXAMPLE)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        drop(window, mime)
    assert window.tabs.count() == 1


def test_bad_file_says_why_and_the_window_stays_usable(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "notes.pt2"
    bad.write_text("this is not a zip")
    with qtbot.waitSignal(window.open_failed, timeout=TIMEOUT) as blocker:
        window.open_path(str(bad))
    assert "not a .pt2 archive" in blocker.args[0] and "notes.pt2" in blocker.args[0]
    assert window.tabs.count() == 0
    open_and_wait(qtbot, window, EXAMPLE)
    assert window.tabs.count() == 1


def test_collapse_expand_and_find_reveals_hidden_nodes(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.collapse_all()
    collapsed = {p for p, item in doc.view.groups.items() if not item.box.expanded}
    assert {"blocks.0", "blocks.1"} <= collapsed
    # a module of one op is that op's box, titled with the module, collapsed or not
    assert {(i.box.module, i.title) for i in doc.view.nodes.values() if i.box.module} >= {
        ("embed", "embed: Embedding"), ("head", "head: Linear")}
    assert "softmax" not in doc.view.nodes
    # Double-clicking a collapsed group expands it.
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.view.group_toggled.emit("blocks.1")
    assert doc.view.groups["blocks.1"].box.expanded
    # Find: regex over names, ops and modules; Enter jumps to the first match, expanding its groups.
    doc.find.setText("^softmax$")
    qtbot.waitUntil(lambda: doc.results.count() == 1, timeout=TIMEOUT)
    assert doc.model.matches == ["softmax"]
    assert doc.view.groups["blocks.0"].state == 3  # the match's collapsed group is marked
    doc.find.returnPressed.emit()
    qtbot.waitUntil(lambda: "softmax" in doc.view.nodes and doc.model.selection == "softmax", timeout=TIMEOUT)
    assert doc.view.nodes["softmax"].state == 2
    assert isinstance(doc.view.groups["blocks.0"], GroupItem) and doc.view.groups["blocks.0"].box.expanded


def test_drill_into_cond_branch_and_back(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    cond = next(n for n in doc.model.program.graph.nodes if n.target.endswith("higher_order.cond"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.enter_subgraph(cond.name, "false_graph_0")
    assert set(doc.view.nodes) == {n.name for n in cond.subgraphs[1].nodes}
    crumbs = [doc.breadcrumb.row.itemAt(i).widget() for i in range(doc.breadcrumb.row.count())]
    texts = [w.text() for w in crumbs if w is not None and hasattr(w, "text")]
    assert texts[0] == "model" and texts[-1] == f"{cond.name} › false_graph_0"
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        crumbs[0].click()
    assert cond.name in doc.view.nodes and len(doc.model.levels) == 1


def _double_click(qtbot, doc: DocumentWidget, node: str) -> None:  # type: ignore[no-untyped-def]
    doc.view.center_on_item(node)
    item = doc.view.nodes[node]
    pos = doc.view.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseDClick(doc.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_double_click_goes_into_subgraphs(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    cond = next(n for n in doc.model.program.graph.nodes if n.target.endswith("higher_order.cond"))
    # A subgraph's own node leads straight into it.
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        _double_click(qtbot, doc, "true_graph_0")
    assert doc.model.level.graph.name == "true_graph_0"
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.go_to_level(0)
    # The cond itself has two branches: a menu offers both.
    _double_click(qtbot, doc, cond.name)
    assert doc.subgraph_menu is not None
    actions = doc.subgraph_menu.actions()
    assert [a.text() for a in actions] == ["Open true_graph_0", "Open false_graph_0"]
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        actions[1].trigger()
    assert doc.model.level.graph.name == "false_graph_0"


def test_selecting_a_node_highlights_neighbours_and_edges(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    doc.select("softmax")
    index = doc.model.level.index
    neighbours = set(index.producers["softmax"]) | set(index.users["softmax"])
    assert {n for n, item in doc.view.nodes.items() if item.state == 1} == neighbours
    assert doc.view.edges is not None and not doc.view.edges.hot.isEmpty()
    # Selecting a hub lights up every proxy that refers to it.
    hub = sorted(index.hubs)[0]
    doc.select(hub)
    lit = [p for p in doc.view.proxies if p.state]
    assert lit and all(p.hub == hub for p in lit)


def test_side_panels_fill_when_shown_and_follow_the_selection(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    code = doc.panel_widgets["Code"]
    doc.panels.setCurrentWidget(code)
    text = code.findChild(QPlainTextEdit).toPlainText()
    assert "def forward(self" in text and "torch.ops.aten.softmax.int" in text
    signature = doc.panel_widgets["Signature"]
    doc.panels.setCurrentWidget(signature)
    tree = signature.tree
    assert tree.topLevelItemCount() > 0
    # Picking a signature row selects that input's node in the graph.
    item = tree.topLevelItem(0)
    while item.childCount():
        item = item.child(0)
    with qtbot.waitSignal(signature.node_requested, timeout=TIMEOUT) as picked:
        tree.itemClicked.emit(item, 0)
    assert doc.model.selection == picked.args[0]
    assert doc.view.nodes[picked.args[0]].state == 2


def test_multi_program_archive_picks_the_named_program(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    path = pt2_path("two_programs")
    names = ["model", "other"]
    doc = open_and_wait(qtbot, window, path, program=names[1])
    assert doc.model.program.name == names[1]
    with qtbot.waitSignal(window.open_failed, timeout=TIMEOUT) as blocker:
        window.open_path(str(path), program="nope")
    assert "no program named 'nope'" in blocker.args[0] and "model" in blocker.args[0]


def test_multi_program_archive_opens_each_program_in_its_own_tab(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    path = pt2_path("two_programs")
    first = open_and_wait(qtbot, window, path)  # no dialog without a user: the first program
    second = open_and_wait(qtbot, window, path, program="other")
    assert [window.tabs.tabText(i) for i in range(2)] == ["two_programs.pt2 [model]", "two_programs.pt2 [other]"]
    assert window.current_document() is second and first.model.program.name == "model"
    assert window.shown_file() == str(path)
    window.close_tab(1)
    assert window.current_document() is first and window.tabs.count() == 1


def test_aoti_package_opens_as_a_tab_that_keeps_the_contract(qtbot, window: MainWindow, aoti_package) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(aoti_package))
    assert blocker.args[0] is None  # no graph to draw
    tab = window.current_tab()  # the package's own tab (app/deploy/aoti_tab.py), through the one contract
    assert isinstance(tab, DocumentTab) and not isinstance(tab, DocumentWidget)
    assert window.stack.currentWidget() is window.tabs and tab.source_file() == str(aoti_package)
    assert window.tabs.tabText(1) == aoti_package.name and window.shown_file() == str(aoti_package)
    # the Program and View menus have nothing to act on; Save Program As… copies the package
    assert window.current_document() is None and window.view_document() is None
    assert not window.program_actions[0].isEnabled() and window.save_action.isEnabled()
    assert "AOTInductor package" in window.statusBar().currentMessage()
    # each tab keeps its own status line: back on the program, its message, not the package's
    window.tabs.setCurrentIndex(0)
    assert window.statusBar().currentMessage() == doc.status_text
    assert "AOTInductor" not in window.statusBar().currentMessage()
    window.tabs.setCurrentIndex(1)
    assert "AOTInductor package" in window.statusBar().currentMessage()
    window.close_tab(1)
    assert window.tabs.count() == 1 and window.current_document() is doc
    window.close_tab(0)
    assert window.stack.currentWidget() is window.start_page and window.current_tab() is None


def test_screenshot_of_an_aoti_package_shows_its_tab(tmp_path: Path, aoti_package) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "aoti.png"
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", str(aoti_package), "--screenshot", str(out)],
                         capture_output=True, text=True, timeout=180, cwd=REPO_ROOT,
                         env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert run.returncode == 0, run.stderr
    assert _non_blank(out)


def test_a_screenshot_that_does_not_show_the_file_fails(qtbot, window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                         monkeypatch) -> None:
    out = tmp_path / "shot.png"
    assert take_screenshot(window, str(EXAMPLE), str(out)) is None and out.exists()
    out.unlink()
    # the window ends up showing something else than the file asked for (the start page): no picture, a reason
    monkeypatch.setattr(window, "shown_file", lambda: None)
    error = take_screenshot(window, str(EXAMPLE), str(out))
    assert error is not None and "does not show 'example.pt2'" in error and "start page" in error
    assert not out.exists()


def test_dynamic_and_unbacked_shapes_show_their_symbols(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("unbacked"))
    symbols = {s.name: s for s in doc.model.program.symbols}
    assert any(s.unbacked for s in symbols.values())
    looks = doc.model.looks()
    assert any(sym in look.subtitle for look in looks.values() for sym in symbols)


def _non_blank(path: Path) -> bool:
    img = QImage(str(path))
    colours = {img.pixel(x, y) for x in range(0, img.width(), 23) for y in range(0, img.height(), 23)}
    return img.width() >= 800 and len(colours) > 8


def test_screenshot_option_saves_a_non_blank_window(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    config = tmp_path / "config"  # the settings this run writes, kept apart
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", str(EXAMPLE), "--screenshot", str(out)],
                         capture_output=True, text=True, timeout=180, cwd=REPO_ROOT,
                         env={**os.environ, "XDG_CONFIG_HOME": str(config)})
    assert run.returncode == 0, run.stderr
    assert _non_blank(out)
    written = "".join(f.read_text(errors="replace") for f in config.rglob("*") if f.is_file())
    assert EXAMPLE.name not in written, "a screenshot run leaves Open Recent alone"


def test_screenshot_of_a_bad_file_fails_with_the_message(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pt2"
    bad.write_bytes(EXAMPLE.read_bytes()[:5000])
    out = tmp_path / "shot.png"
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", str(bad), "--screenshot", str(out)],
                         capture_output=True, text=True, timeout=180, cwd=REPO_ROOT)
    assert run.returncode != 0
    assert "broken.pt2" in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()


def test_render_without_a_window(tmp_path: Path) -> None:
    for suffix in (".svg", ".png"):
        out = tmp_path / f"graph{suffix}"
        run = subprocess.run([sys.executable, "-m", "pt2_viewer", "render", str(EXAMPLE), "-o", str(out)],
                             capture_output=True, text=True, timeout=180, cwd=REPO_ROOT)
        assert run.returncode == 0, run.stderr
        assert out.stat().st_size > 1000
    assert "softmax" in (tmp_path / "graph.svg").read_text()
    assert _non_blank(tmp_path / "graph.png")


def test_a_window_opened_on_a_file_shows_its_tab_and_never_builds_the_start_page(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.start_page import StartPage

    window = MainWindow(interactive=False)
    qtbot.addWidget(window)
    window.show()
    # as main.py does with the command line's file: opened right after the window is shown
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(EXAMPLE))
    assert window.stack.currentWidget() is window.tabs and window.current_document() is not None
    assert window.findChildren(StartPage) == [], "the start page is built only when it is shown"
    window.layouts.close()
    # A window opened on a file that cannot be opened: the start page, once nothing is opening.
    bad = tmp_path / "broken.pt2"
    bad.write_bytes(EXAMPLE.read_bytes()[:5000])
    other = MainWindow(interactive=False)
    qtbot.addWidget(other)
    other.show()
    with qtbot.waitSignal(other.open_failed, timeout=TIMEOUT):
        other.open_path(str(bad))
    assert other.stack.currentWidget() is other.findChildren(StartPage)[0] and other.current_tab() is None
    other.layouts.close()
