"""The window's trace view on traces real torch wrote (tests/trace_programs.py): a TORCH_TRACE folder or log opened
by every route lists every compile id, its graph breaks at the user's lines with their fixes, its recompiles with
the failed guard in words and a diff of the graph before and after, each rank of a torchrun trace and where they
differ, cache hits, and a damaged log's entries before the damage with one line. Offscreen; every wait is on a
signal."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QFileDialog

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.trace.compiles_tree import ROLE, GraphRow
from pt2_viewer.app.trace.graph_tab import CompiledGraphTab
from pt2_viewer.app.trace.tab import TraceTab
from pt2_viewer.core.trace.reader import read_trace
from tests.app.drag_and_drop import drag_enter_accepted, drop
from tests.trace_programs import compile_trace, marked_line, ranks_breaks_trace, ranks_trace, warm_trace

TIMEOUT = 60_000


def open_trace(qtbot, window: MainWindow, path: Path) -> TraceTab:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(path))
    tab = window.current_tab()
    assert isinstance(tab, TraceTab), tab
    return tab


def test_a_trace_folder_lists_every_compile_id_in_its_tab(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    folder = compile_trace()
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(folder))
        assert window.tabs.count() == 0  # read in a thread: the window's event loop runs while it is read
    tab = window.current_tab()
    assert isinstance(tab, TraceTab)
    assert window.tabs.tabText(window.tabs.currentIndex()) == folder.name
    assert tab.tree.compile_ids() == [str(c.id) for c in read_trace(folder).compiles]
    assert {"[2/1]", "[4/0_1]"} <= set(tab.tree.compile_ids())  # a recompile and a restart
    titles = {tab.tree.compile_item(c).text(0) for c in tab.trace.compiles}  # type: ignore[union-attr]
    assert {"[2/1] recompile", "[4/0_1] restart"} <= titles
    assert not tab.rank_choice.isVisible() and not tab.differences.isVisible() and not tab.damage.isVisible()
    assert "15 compiles" in window.statusBar().currentMessage()
    again = window.tabs.count()
    open_trace(qtbot, window, folder)  # opened again: its tab, not a second one
    assert window.tabs.count() == again


def test_a_graph_shows_its_text_and_inductor_code_says_it_has_no_provenance(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tab = open_trace(qtbot, window, compile_trace())
    first = tab.tree.compile_item(tab.trace.compiles[0])
    assert first is not None
    rows = {first.child(i).text(0): first.child(i) for i in range(first.childCount())}
    assert "Inductor output code (backward)" in rows  # the CNN's training step: forward and backward told apart
    tab.tree.setCurrentItem(rows["Dynamo graph"])
    assert tab.code.editor.toPlainText().startswith("class GraphModule(torch.nn.Module):")
    row = rows["Inductor output code (forward)"]
    assert isinstance(row.data(0, ROLE), GraphRow)
    with qtbot.waitSignal(tab.graph_opened, timeout=TIMEOUT) as opened:
        tab.tree.itemDoubleClicked.emit(row, 0)
    assert opened.args[1].kind == "inductor_code"
    assert "no provenance in this trace" in tab.code.title.text()
    assert "AOT ID" in tab.code.editor.toPlainText()


def test_graph_breaks_are_actions_at_the_users_lines(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    folder = compile_trace()
    script = folder.parent / "compile_script.py"
    tab = open_trace(qtbot, window, folder)
    text = tab.breaks.toPlainText()
    fixes = {"branch": "torch.cond", "print": "reorderable_logging_functions", "item": "capture_scalar_outputs"}
    for marker, fix in fixes.items():
        line = marked_line(script, marker)
        entry = next(part for part in text.split("\n\n") if f"compile_script.py:{line} —" in part)
        assert fix in text.split(f"compile_script.py:{line} —", 1)[1], (marker, entry)
    assert "gb0170" in text and "hit by [2/0], [2/1]" in text  # the code, its page, every compile that hit it
    assert tab.lists.tabText(1) == "Graph breaks (3)"
    with qtbot.waitSignal(tab.breaks.source_requested, timeout=TIMEOUT) as clicked:
        tab.breaks.anchorClicked.emit(QUrl("source:0"))  # the first break's file:line link
    assert clicked.args == [str(script), marked_line(script, "branch")]
    tab.breaks.anchorClicked.emit(QUrl("compile:[2/1]"))  # a compile id's link selects it
    assert tab.lists.currentWidget() is tab.tree and tab.code.title.text().startswith("[2/1] recompile")


def test_recompiles_say_the_failed_guard_in_words_and_diff_the_graph(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tab = open_trace(qtbot, window, compile_trace())
    text = tab.recompiles.toPlainText()
    assert "x.size(0) was 2 when compiled for [8/0], now 3" in text
    assert "x.dtype was float32 when compiled for [8/1], now float64" in text
    assert "torch._dynamo.mark_dynamic(x, 0)" in text and "dynamic=True" in text
    tab.recompiles.anchorClicked.emit(QUrl("diff:[8/2]"))
    diff = tab.code.editor.toPlainText().splitlines()
    assert diff[0] == "--- [8/1] Dynamo graph" and diff[1] == "+++ [8/2] Dynamo graph"
    assert any(line.startswith("-") and '"f32[' in line for line in diff)
    assert any(line.startswith("+") and '"f64[' in line for line in diff)


def test_a_graph_double_clicked_opens_in_the_graph_view(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tab = open_trace(qtbot, window, compile_trace())
    first = tab.tree.compile_item(tab.trace.compiles[0])  # the CNN's training step
    assert first is not None
    rows = {first.child(i).text(0): first.child(i) for i in range(first.childCount())}
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as shown:
        tab.tree.itemDoubleClicked.emit(rows["Dynamo graph"], 0)
    doc = shown.args[0]
    assert isinstance(doc, CompiledGraphTab) and window.current_tab() is doc
    calls = {n.target for n in doc.model.program.graph.nodes if n.target}
    assert {"torch.conv2d", "torch.nn.functional.max_pool2d"} <= calls, calls
    qtbot.waitUntil(lambda: doc.view.painted > 0, timeout=TIMEOUT)
    # a graph read from a trace is no file torch loads: nothing to save, no job to run on it
    assert not window.save_action.isEnabled() and not any(a.isEnabled() for a in window.program_actions)
    run = doc.panels.indexOf(doc.job_tabs.panels["Run"])
    assert not doc.panels.isTabEnabled(run) and "torch.compile trace" in doc.panels.tabToolTip(run)
    count = window.tabs.count()
    window.tabs.setCurrentWidget(tab)
    tab.tree.itemDoubleClicked.emit(rows["Dynamo graph"], 0)  # open already: its tab again, not a second one
    assert window.current_tab() is doc and window.tabs.count() == count
    tab.tree.itemDoubleClicked.emit(rows["Inductor output code (forward)"], 0)  # code: shown as text, no tab
    assert window.tabs.count() == count


def test_a_recompile_compares_its_graph_with_the_one_before_in_the_diff_view(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tab = open_trace(qtbot, window, compile_trace())
    with qtbot.waitSignal(window.tabs.currentChanged, timeout=TIMEOUT):
        tab.recompiles.anchorClicked.emit(QUrl("compare:[8/2]"))
    view = window.current_tab()
    assert isinstance(view, CompareView)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "compile_trace [8/1] ⟷ [8/2]"
    summary = view.diff_panel.summary.text()
    assert "3 changed" in summary and "dtype" in summary, summary  # float32 -> float64, matched node for node


def test_ranks_by_drag_and_drop_each_with_a_selector_and_where_they_differ(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    folder = ranks_trace()
    mime = drag_enter_accepted(window, folder)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        drop(window, mime)
    tab = window.current_tab()
    assert isinstance(tab, TraceTab)
    assert tab.rank_choice.isVisible() and tab.rank_choice.count() == 2
    assert tab.differences.isVisible() and "[0/1] on rank 1 only; not on rank 0" in tab.differences.text()
    assert tab.tree.compile_ids() == ["[0/0]"] and tab.lists.tabText(2) == "Recompiles (0)"
    tab.rank_choice.setCurrentIndex(1)
    assert tab.tree.compile_ids() == ["[0/0]", "[0/1]"] and tab.lists.tabText(2) == "Recompiles (1)"
    assert "x.size(0) was 4 when compiled for [0/0], now 5" in tab.recompiles.toPlainText()


def test_a_break_both_ranks_hit_lists_each_ranks_own_compiles(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    folder = ranks_breaks_trace()  # both ranks break at one print: rank 0 in [0/0], rank 1 in [1/0]
    script = folder.parent / "ranks_breaks_script.py"
    tab = open_trace(qtbot, window, folder)
    printing = f"ranks_breaks_script.py:{marked_line(script, 'print')} —"
    assert tab.lists.tabText(1) == "Graph breaks (2)" and printing in tab.breaks.toPlainText()
    assert "hit by [0/0]\n" in tab.breaks.toPlainText() + "\n"
    tab.rank_choice.setCurrentIndex(1)
    text = tab.breaks.toPlainText()
    assert tab.lists.tabText(1) == "Graph breaks (1)" and printing in text
    assert "hit by [1/0]" in text and "[0/0]" not in text  # rank 1's own compile, not rank 0's
    tab.breaks.anchorClicked.emit(QUrl("compile:[1/0]"))
    assert tab.code.title.text().startswith("[1/0]") and "Graph break at ranks_breaks_script.py:" in \
        tab.code.editor.toPlainText()


def test_a_log_from_the_file_menu_marks_its_cache_hits(qtbot, window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    log = next(warm_trace().glob("*.log"))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(log), ""))
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_dialog()
    tab = window.current_tab()
    assert isinstance(tab, TraceTab) and window.tabs.tabText(window.tabs.currentIndex()) == log.name
    hits = [c for c in tab.trace.compiles if c.cache_hit]
    assert hits
    for compile_ in hits:
        row = tab.tree.compile_item(compile_)
        assert row is not None and row.text(4) == "cache hit" and "FX graph cache" in row.toolTip(4)
    assert "from the cache" in tab.headline.text()


def test_a_damaged_log_shows_the_entries_before_the_damage_and_one_line(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                         tmp_path: Path) -> None:
    log = next(compile_trace().glob("*.log"))
    data = log.read_bytes()
    cut = tmp_path / log.name
    cut.write_bytes(data[: len(data) // 2])
    tab = open_trace(qtbot, window, cut)
    whole = [str(c.id) for c in read_trace(log).compiles]
    shown = tab.tree.compile_ids()
    assert 0 < len(shown) < len(whole) and shown == whole[: len(shown)]
    assert tab.damage.isVisible() and "\n" not in tab.damage.text()
    assert cut.name in tab.damage.text() and "entries before the damage are shown" in tab.damage.text()


def test_screenshot_of_a_trace_shows_its_tab(tmp_path: Path) -> None:
    out = tmp_path / "trace.png"
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", str(compile_trace()), "--screenshot", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert out.stat().st_size > 10_000
