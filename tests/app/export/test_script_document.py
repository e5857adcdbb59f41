"""Opening model scripts in the window: real scripts exported by torch 2.13 in a real worker, driven from the GUI
thread. The Exports list fills in call order, programs open in the script's tab, failures are explained with the
user's line and a fix that re-exports, a hanging script is cancelled at once, a crash is reported in words, and a
script runs only after the trust question. Offscreen; every wait is on a signal or a condition."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMessageBox

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.export.script_document import ENTRY_ROLE, SCRIPT_ERROR_ROLE, ScriptDocument
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.panels.symbols import ROW_ROLE, SymbolsPanel
from pt2_viewer.app.platform.trust_dialog import TITLE as TRUST_TITLE
from pt2_viewer.app.widgets.source_view import SourceView
from pt2_viewer.core.export.failures import (
    CONSTRAINT_VIOLATION,
    DATA_DEPENDENT_GUARD,
    GRAPH_BREAK,
    SPECIALIZED_VALUE,
    plain_sentence,
)
from pt2_viewer.core.export.script_session import NAMED, OK
from pt2_viewer.core.pt2.reader import read_archive
from tests.core.export.test_failures import line_in
from tests.programs import REPO_ROOT, SEED_TUTORIAL

SCRIPTS = Path(__file__).parents[2] / "scripts"
SEVERAL = SCRIPTS / "several_exports.py"
CONVENTION = SCRIPTS / "convention.py"
TUTORIAL = SEED_TUTORIAL
EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
TIMEOUT = 240_000


@pytest.fixture(autouse=True)
def one_thread(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the worker inherits it; the machine is shared


@pytest.fixture
def window(qtbot) -> MainWindow:  # type: ignore[no-untyped-def]
    w = MainWindow(interactive=False, trust_scripts=True)
    qtbot.addWidget(w)
    w.show()
    yield w
    for i in range(w.tabs.count()):
        if isinstance(tab := w.tabs.widget(i), ScriptDocument):
            tab.shutdown()


def open_script(qtbot, window: MainWindow, script: Path) -> tuple[ScriptDocument, object]:  # type: ignore[no-untyped-def]
    """Open a script and wait until the run ended and the first program (or nothing) is on screen."""
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(script))
    doc = window.tabs.currentWidget()
    assert isinstance(doc, ScriptDocument)
    return doc, blocker.args[0]


def entries(doc: ScriptDocument) -> list:  # type: ignore[type-arg]
    return [e for i in range(doc.exports.count()) if (e := doc.exports.item(i).data(ENTRY_ROLE)) is not None]


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_exports_fill_in_order_and_a_program_opens_in_the_scripts_tab(qtbot, window: MainWindow,
                                                                       tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen: list[list[str]] = []
    window.tabs.currentChanged.connect(lambda _i: _watch_list(window, seen))
    shown, program_doc = open_script(qtbot, window, SEVERAL)
    # the list grew one call at a time, in call order, while the script ran
    assert [len(s) for s in seen] == list(range(1, 10))
    assert seen[-1][:3] == ["Small", "DataBranch", "ItemBranch"]
    calls = entries(shown)
    assert [e.model for e in calls] == ["Small", "DataBranch", "ItemBranch", "IntCast", "Broadcast", "Shapes",
                                        "Cond", "MapModule", "UsesGlobals"]
    assert [e.ok for e in calls] == [True, False, False, False, False, True, True, True, True]
    assert shown.exports.item(0).text().startswith("✔ #0 Small  (line 15)")
    assert shown.exports.item(1).text().startswith("✘ #1 DataBranch")
    # the first successful program is shown inside the script's tab, through the usual document widget
    assert isinstance(program_doc, DocumentWidget) and program_doc is shown.program_document
    assert set(program_doc.view.nodes) == {n.name for n in program_doc.model.program.graph.nodes}
    assert window.current_document() is program_doc  # View menu actions reach it
    assert "all done" in shown.log_view.toPlainText() and "caught UserError" in shown.log_view.toPlainText()
    assert shown.progress_label.text() == "9 export calls: 5 exported, 4 failed."

    # each failure is explained: kind, user line, message, hint; the traceback only on demand
    expect = {1: (GRAPH_BREAK, "# graph break in strict mode"), 2: (DATA_DEPENDENT_GUARD, "# data-dependent guard"),
              3: (SPECIALIZED_VALUE, "# specialized value"), 4: (CONSTRAINT_VIOLATION, "w = x + y")}
    for row, (kind, marker) in expect.items():
        shown.exports.setCurrentRow(row)
        assert shown.views.currentWidget() is shown.explanation
        failure = calls[row].failure
        assert failure.kind == kind
        assert failure.title in shown.explanation.title.text()
        assert f"several_exports.py:{line_in(str(SEVERAL), marker)}" in shown.explanation.where.text()
        assert shown.explanation.hint.isVisibleTo(shown) and not shown.explanation.traceback.isVisibleTo(shown)
        # one plain sentence leads, then the failure in the user's words (no torch symbol); torch's message waits
        # behind "Show torch's message"
        sentence = shown.explanation.sentence.text()
        assert sentence.startswith(plain_sentence(failure)) and calls[row].headline in sentence
        assert not re.search(r"\b[su]\d+\b|L\[|Eq\(", sentence + shown.exports.item(row).text()), sentence
        assert shown.explanation.sentence.isVisibleTo(shown) and not shown.explanation.message.isVisibleTo(shown)
        assert shown.explanation.show_traceback.text() == "Show torch's message"
    assert "d1 = 4" in shown.explanation.fix.text() and shown.explanation.fix_box.isVisibleTo(shown)
    assert shown.explanation.apply_fix.text().startswith("Try it")
    shown.explanation.show_traceback.click()
    assert shown.explanation.traceback.isVisibleTo(shown)
    assert shown.explanation.show_traceback.text() == "Hide torch's message"
    full = shown.explanation.traceback.toPlainText()
    assert "Traceback" in full and 'TORCH_LOGS="+dynamic"' in full and "Suggested fixes:" in full
    shown.explanation.where.linkActivated.emit("source")  # a click on the user line opens the source there
    source = shown.findChild(SourceView)
    assert source is not None and source.file == str(SEVERAL) and source.line == line_in(str(SEVERAL), "w = x + y")

    # guards: where symbols came from, the line behind each guard, and the link to the program's Symbols panel
    shown.exports.setCurrentRow(5)
    assert shown.guards.guards.topLevelItem(0).text(0) == "x.shape[0] == y.shape[1]"
    assert "x0 = x + y" in shown.guards.guards.topLevelItem(0).text(2)
    qtbot.waitUntil(lambda: shown.document_entry is calls[5] and shown.program_document.ready, timeout=TIMEOUT)
    symbol = shown.guards.symbols.topLevelItem(0)
    assert symbol.text(1) == "x.shape[0]"
    shown.guards.symbols.itemClicked.emit(symbol, 0)
    panel = shown.program_document.panel_widgets["Symbols"]
    assert isinstance(panel, SymbolsPanel) and shown.program_document.panels.currentWidget() is panel
    row = panel.tree.currentItem().data(0, ROW_ROLE)
    assert "x.shape[0]" in row.sources and shown.program_document.model.marked == list(row.nodes)

    # File > Save Program As… copies the selected export's .pt2, atomically
    target = tmp_path / "saved" / "shapes.pt2"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.save_program_dialog()
    assert read_archive(str(target)).programs[0].graph.nodes
    assert [p.name for p in target.parent.iterdir()] == ["shapes.pt2"]


def _watch_list(window: MainWindow, seen: list[list[str]]) -> None:
    doc = window.tabs.currentWidget()
    if isinstance(doc, ScriptDocument) and not seen:
        doc.driver.event.connect(lambda e: seen.append([x.model for x in entries(doc)])
                                 if e["type"] == "export_started" else None)


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_a_constraint_violation_fix_applies_and_re_exports(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc, shown = open_script(qtbot, window, CONVENTION)
    assert shown is None  # nothing exported: the list and the explanation are what there is to see
    entry = entries(doc)[0]
    assert entry.kind == CONSTRAINT_VIOLATION and doc.views.currentWidget() is doc.explanation
    assert "+ y: (dx, Dim.STATIC)" in doc.explanation.fix.text()
    # the editor shows the script's spec per input dim; making y's batch the named Dim dx is the same fix
    assert [(r.label, r.kind, r.name) for r in doc.editor.rows] == [
        ("x.shape[0]", NAMED, "dx"), ("x.shape[1]", "static", ""), ("y.shape[0]", NAMED, "dy"),
        ("y.shape[1]", "static", "")]
    doc.editor.set_kind("y", 0, NAMED, name="dx")
    assert doc.editor.spec() == doc.session.fixed_spec(entry)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        doc.explanation.apply_fix.click()
    again = entries(doc)[0]
    assert again.rerun and again.status == OK and "[re-export]" in doc.exports.item(0).text()
    assert isinstance(blocker.args[0], DocumentWidget) and blocker.args[0] is doc.program_document
    assert [s.name for s in doc.program_document.model.program.signature.inputs][-2:] == ["x", "y"]


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_cancel_stops_a_hanging_script_at_once_and_the_window_still_opens_files(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.open_path(str(SCRIPTS / "hang.py"))
    doc = window.tabs.currentWidget()
    assert isinstance(doc, ScriptDocument)
    qtbot.waitUntil(lambda: "child pid" in doc.log_view.toPlainText(), timeout=TIMEOUT)
    child = int(doc.log_view.toPlainText().split("child pid ")[1].split()[0])
    assert doc.running and doc.cancel_button.isEnabled()
    started = time.monotonic()
    with qtbot.waitSignal(doc.driver.finished, timeout=5_000) as blocker:
        doc.cancel_button.click()
    assert time.monotonic() - started < 1.0
    assert blocker.args[0].status == "cancelled" and not doc.running
    assert doc.progress_label.text().startswith("Cancelled")
    qtbot.waitUntil(lambda: not _alive(child), timeout=5_000)  # the script's own child went too
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as opened:
        window.open_path(str(EXAMPLE))
    assert isinstance(opened.args[0], DocumentWidget) and window.tabs.count() == 2


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
@pytest.mark.parametrize("script, words, printed", [("segfault.py", "segmentation fault", "about to crash"),
                                                    ("os_exit.py", "exited with code 3", "leaving now")])
def test_a_crashing_script_is_reported_in_words(qtbot, window: MainWindow, script: str, words: str,
                                                printed: str) -> None:  # type: ignore[no-untyped-def]
    doc, shown = open_script(qtbot, window, SCRIPTS / script)
    assert shown is None and doc.session.outcome_status == "crashed"
    assert words in doc.explanation.message.text() and words in doc.progress_label.text()
    assert doc.views.currentWidget() is doc.explanation
    assert printed in doc.log_view.toPlainText()
    assert doc.run_button.isEnabled() and not doc.cancel_button.isEnabled()


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_the_trust_prompt_comes_once_per_content(qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "leaves.py"
    shutil.copy(SCRIPTS / "os_exit.py", script)
    asked: list[str] = []
    answer = {"button": QMessageBox.StandardButton.Yes}

    def warning(parent, title, text, *args):  # type: ignore[no-untyped-def]
        asked.append(text)
        assert title == TRUST_TITLE
        return answer["button"]

    monkeypatch.setattr(QMessageBox, "warning", warning)
    strict = MainWindow(interactive=False)  # no dialogs and no trust given: the script is not run
    qtbot.addWidget(strict)
    with qtbot.waitSignal(strict.open_failed, timeout=5_000) as refused:
        strict.open_path(str(script))
    assert "not run" in refused.args[0] and strict.tabs.count() == 0 and asked == []

    w = MainWindow(interactive=True)
    qtbot.addWidget(w)
    for expected_prompts in (1, 1):  # asked the first time only
        with qtbot.waitSignal(w.document_ready, timeout=TIMEOUT):
            w.open_path(str(script))
        assert len(asked) == expected_prompts
    assert str(script) in asked[0] and "runs its code" in asked[0]
    assert w.tabs.count() == 2
    script.write_text(script.read_text() + "# edited\n")  # new content: ask again; "No" runs nothing
    answer["button"] = QMessageBox.StandardButton.No
    w.open_path(str(script))
    assert len(asked) == 2 and w.tabs.count() == 2
    answer["button"] = QMessageBox.StandardButton.Yes
    with qtbot.waitSignal(w.document_ready, timeout=TIMEOUT):
        w.open_path(str(script))
    assert len(asked) == 3 and w.tabs.count() == 3
    # now trusted: a window without dialogs runs it too
    with qtbot.waitSignal(strict.document_ready, timeout=TIMEOUT):
        strict.open_path(str(script))
    assert len(asked) == 3
    for window in (w, strict):
        for i in range(window.tabs.count()):
            window.tabs.widget(i).shutdown()


def test_screenshot_of_a_script_without_a_program_shows_the_explanation(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-m", "pt2_viewer.app.cli", str(CONVENTION), "--screenshot", str(out)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert image.width() >= 1000 and image.height() >= 600


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.skipif(not TUTORIAL.is_file(), reason="the seed tutorial is not on this machine")
def test_the_seed_tutorial_lists_all_its_exports_and_failures(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc, shown = open_script(qtbot, window, TUTORIAL)
    calls = entries(doc)
    assert len(calls) == 22 and sum(e.ok for e in calls) == 16
    assert {DATA_DEPENDENT_GUARD, CONSTRAINT_VIOLATION, SPECIALIZED_VALUE} <= {e.kind for e in calls}
    assert [e.line.line for e in calls] == sorted(e.line.line for e in calls)
    assert isinstance(shown, DocumentWidget) and doc.document_entry is calls[0]
    stopped = doc.session.script_error
    assert stopped is not None and "export_for_training" in stopped.message
    assert f"The script stopped at line {stopped.line.line}" in doc.progress_label.text()
    # The script's own error is a row of its own after the calls; selecting it explains it with a clickable line.
    last = doc.exports.item(doc.exports.count() - 1)
    assert last.data(SCRIPT_ERROR_ROLE) and f"line {stopped.line.line}" in last.text()
    doc.exports.setCurrentItem(last)
    assert doc.views.currentWidget() is doc.explanation and doc.selected_entry() is None
    assert doc.explanation.where.isVisibleTo(doc) and "<a href" in doc.explanation.where.text()
    with qtbot.waitSignal(doc.explanation.source_requested) as clicked:
        doc.explanation.where.linkActivated.emit("source")
    assert clicked.args == [stopped.line.file, stopped.line.line]
