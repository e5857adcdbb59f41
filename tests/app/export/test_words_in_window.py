"""torch's words translated where users meet them in the window (issue 30 §2): for failing doctor scripts, the Exports
list (text and tooltip), every status message, the progress line and the Problems text carry no `u0`, `s97`,
`L['a']` or `Eq(...)`; and after "Try it" the fixed program's graph, Symbols panel and Details say the script's own
Dim name (`batch_a`, with `(s52)` only as an aside). Real scripts in a real worker; every wait is on a signal."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.export.script_document import ScriptDocument
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.panels.details import DetailsPanel
from tests.app.export.test_script_document import one_thread, window  # noqa: F401  (the same fixtures)
from tests.core.export.doctor_runs import SCRIPTS
from tests.core.export.test_words_everywhere import leaks

TIMEOUT = 240_000


def open_failing(qtbot, window: MainWindow, script: Path) -> tuple[ScriptDocument, list[str]]:  # type: ignore[no-untyped-def]
    """Open a script whose export fails; returns its tab and every message the status bar showed on the way."""
    said: list[str] = []
    window.statusBar().messageChanged.connect(said.append)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(script))
    doc = window.tabs.currentWidget()
    assert isinstance(doc, ScriptDocument)
    return doc, said


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
@pytest.mark.parametrize("name", ["branch_on_sum", "module_item_range", "narrowed_by_if"])
def test_a_failed_script_and_its_problems_are_said_in_the_users_words(qtbot, window: MainWindow, tmp_path: Path,
                                                                       name: str) -> None:
    script = tmp_path / f"{name}.py"
    shutil.copy(SCRIPTS / script.name, script)
    doc, said = open_failing(qtbot, window, script)
    assert not doc.session.entries[0].ok
    with qtbot.waitSignal(doc.problems.finished, timeout=TIMEOUT):
        doc.diagnose_button.click()
    shown = {"status bar": "\n".join(said), "progress line": doc.progress_label.text(),
             "Problems": doc.problems.status.text() + "\n" + doc.problems.browser.toPlainText()}
    for i in range(doc.exports.count()):
        shown[f"Exports row {i}"] = doc.exports.item(i).text() + "\n" + doc.exports.item(i).toolTip()
    assert said and doc.problems.browser.toPlainText().strip()
    for where, text in shown.items():
        assert leaks(text) == [], f"{name}: torch's symbols in the {where}:\n{text}"


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_try_it_shows_the_scripts_dim_name_in_the_fixed_program(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """module_equal_dims.py: `batch_a`, `batch_b` the model forces equal. "Try it" re-exports with b's batch made
    batch_a; the program shown says `batch_a` in its shapes, the Symbols panel and Details (torch's `s52` an aside)."""
    script = tmp_path / "module_equal_dims.py"
    shutil.copy(SCRIPTS / script.name, script)
    doc, said = open_failing(qtbot, window, script)
    assert doc.program_document is None and doc.explanation.apply_fix.isVisible()
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as shown:
        doc.explanation.apply_fix.click()
    program = shown.args[0]
    assert isinstance(program, DocumentWidget) and doc.session.entries[0].ok
    [symbol] = [s for s in program.model.program.symbols if "a.shape[0]" in s.sources]
    assert re.fullmatch(r"s\d+", symbol.name)
    tip = program.view.tooltip_text(program.view.nodes["a"])  # the graph: its shape in the script's name
    assert "[batch_a, 3]" in tip and f"[{symbol.name}, " not in tip, tip
    program.panels.setCurrentWidget(program.symbols_panel)  # a panel is filled when it is shown
    tree = program.symbols_panel.tree
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == [f"batch_a ({symbol.name})"]
    details = program.panel_widgets["Details"]
    assert isinstance(details, DetailsPanel)
    program.panels.setCurrentWidget(details)
    details.show_node(None)  # nothing selected: the program's properties, its Symbols section first named
    rows = details.details.section("Symbols") if details.details is not None else None
    assert rows is not None and [r.label for r in rows.rows] == [f"batch_a ({symbol.name})"]
    assert leaks("\n".join(said)) == []
