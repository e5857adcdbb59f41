"""Diagnose in a script's tab: the export doctor runs in the worker and the Problems tab lists every problem with the
user's line as a link (which opens the source there), torch's suggestion and the `torch._check` fix as a diff.
Offscreen; every wait is on a signal."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from pt2_viewer.app.export.script_document import ScriptDocument
from pt2_viewer.app.main_window import MainWindow
from tests.app.export.test_script_document import one_thread, window  # noqa: F401  (the same fixtures)
from tests.core.export.test_doctor import script_text

TIMEOUT = 240_000


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_diagnose_lists_every_problem_with_its_fix_and_line(qtbot, window: MainWindow, tmp_path: Path) -> None:
    script = tmp_path / "data_dependent.py"
    script.write_text(script_text(), encoding="utf-8")
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(script))
    doc = window.tabs.currentWidget()
    assert isinstance(doc, ScriptDocument)
    doc.select(0)  # a failed call: Export options shows its real input dims, from the example inputs
    assert doc.editor.rank_boxes == {} and doc.editor.ranks == {"x": 0, "y": 1}
    assert doc.editor.table.cellWidget(0, 0).text() == "y.shape[0] (4)"  # x is 0-d: y's row is the first
    with qtbot.waitSignal(doc.problems.finished, timeout=TIMEOUT) as done:
        doc.diagnose_button.click()
    assert doc.views.currentWidget() is doc.problems
    report = done.args[0]
    assert report is not None and [c.problems is not None for c in report.calls] == [True, True, True]
    text = doc.problems.browser.toPlainText()
    assert doc.problems.status.text().startswith("2 problems in 3 export calls")
    assert "data_dependent_error ×1 at data_dependent.py:" in text
    assert "Verified fix (torch_check): with it the call exports." in text
    assert "+        torch._check(a // 2 >= 5)" in text and "reject inputs where a // 2 < 5" in text
    assert "torch's draft export could not diagnose this call" in text  # the fallback, said
    line = script.read_text().splitlines().index("        if a // 2 >= 5:") + 1
    with qtbot.waitSignal(doc.problems.source_requested) as clicked:
        doc.problems.browser.anchorClicked.emit(QUrl("line:0"))
    assert clicked.args == [str(script), line]
    # "Apply to file": shown, written only on the user's yes, original kept, exported again at once
    original = script.read_text()
    doc.problems.confirm_apply = lambda name, diff: False
    doc.problems.browser.anchorClicked.emit(QUrl("apply:0"))
    assert script.read_text() == original and "Nothing was written" in doc.problems.status.text()
    shown: list[str] = []
    doc.problems.confirm_apply = lambda name, diff: bool(shown.append(diff)) or True
    with qtbot.waitSignal(doc.problems.file_changed, timeout=TIMEOUT):
        doc.problems.browser.anchorClicked.emit(QUrl("apply:0"))
    assert shown and "+        torch._check(a // 2 >= 5)" in shown[0]
    assert "        torch._check(a // 2 >= 5)\n        if a // 2 >= 5:" in script.read_text()
    assert (tmp_path / "data_dependent.py.orig").read_text() == original
    assert doc.running  # re-exporting the fixed script
    qtbot.waitUntil(lambda: not doc.running, timeout=TIMEOUT)
    assert [e.ok for e in doc.session.entries] == [True, True, True]
    doc.problems.undo_apply()
    assert script.read_text() == original and not (tmp_path / "data_dependent.py.orig").exists()
    draft = report.calls[0].problems.pt2  # the draft program opens as a tab from its link
    with qtbot.waitSignal(doc.open_in_new_tab) as opened:
        doc.problems.browser.anchorClicked.emit(QUrl(f"draft:{draft}"))
    assert Path(opened.args[0]).name == draft and Path(opened.args[0]).is_file()


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_export_report_of_the_script_tab_writes_one_html_file(qtbot, window: MainWindow, tmp_path: Path) -> None:
    from pt2_viewer.app.export.report_export import ReportWriter, report_source

    script = tmp_path / "data_dependent.py"
    script.write_text(script_text(), encoding="utf-8")
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(script))
    source = report_source(window.tabs.currentWidget())
    assert source is not None and source[0] == "script"
    writer = ReportWriter(window)
    out = tmp_path / "report.html"
    with qtbot.waitSignal(writer.finished, timeout=TIMEOUT) as done:
        writer.write(source, out)
    message, ok = done.args
    assert ok and message.startswith(f"Saved the report {out}")
    text = out.read_text(encoding="utf-8")
    assert "#0 Foo (non-strict)" in text and "failed: data_dependent_guard" in text and '"name":"#2 Index"' in text


def test_export_report_of_a_program_tab(qtbot, window: MainWindow, pt2_path, tmp_path: Path) -> None:
    from pt2_viewer.app.export.report_export import ReportWriter, report_source

    pt2 = pt2_path("topk_cond")
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(pt2))
    source = report_source(window.tabs.currentWidget())
    assert source == ("archive", [Path(pt2)])
    writer = ReportWriter(window)
    out = tmp_path / "topk.html"
    with qtbot.waitSignal(writer.finished, timeout=TIMEOUT) as done:
        writer.write(source, out)
    assert done.args[1] and '"name":"model"' in out.read_text(encoding="utf-8")


def test_the_apply_dialog_shows_the_whole_diff_and_what_it_narrows(qtbot) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.export.apply_dialog import ApplyDialog
    from pt2_viewer.core.export.fixes.apply import Written

    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n a = 1\n+torch._check(m > 10)\n if m > 10:\n"
    dialog = ApplyDialog("m.py", diff, [Written(Path("m.py"), Path("m.py.orig"))],
                         "the exported program will reject inputs where m <= 10")
    qtbot.addWidget(dialog)
    assert dialog.diff.toPlainText() == diff and dialog.write.text() == "Write to file"
    assert "reject inputs where m &lt;= 10" in dialog.text.text() and "m.py.orig" in dialog.text.text()


def test_the_apply_dialog_names_the_backup_it_will_write(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 43: with fail_unbacked.py.orig already there, the confirmation said ".orig" and the writer kept
    ".orig2". Both now ask core/export/fixes/apply.py for the name."""
    from pt2_viewer.app.export.apply_dialog import ApplyDialog
    from pt2_viewer.core.export.fixes.apply import apply_to_files

    script = tmp_path / "fail_unbacked.py"
    script.write_text("a = 1\nif m > 10:\n    pass\n")
    (tmp_path / "fail_unbacked.py.orig").write_text("the user's own\n")
    diff = ("--- a/fail_unbacked.py\n+++ b/fail_unbacked.py\n@@ -1,2 +1,3 @@\n a = 1\n+torch._check(m > 10)\n"
            " if m > 10:\n")
    dialog = ApplyDialog.for_fix("fail_unbacked.py", diff, tmp_path)
    qtbot.addWidget(dialog)
    assert "The original is kept as <b>fail_unbacked.py.orig2</b>" in dialog.text.text()
    [written] = apply_to_files(diff, tmp_path)  # what "Write to file" does
    assert written.original.name == "fail_unbacked.py.orig2"
    assert (tmp_path / "fail_unbacked.py.orig").read_text() == "the user's own\n"


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_a_module_level_script_gets_its_fix_in_its_own_words(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """The module-level convention (no export call in the script): the Problems tab says what the model requires in
    the user's names, the verified fix edits the script's own Dim line, and applied it makes the script export."""
    import re
    import shutil

    from tests.core.export.doctor_runs import SCRIPTS

    script = tmp_path / "module_equal_dims.py"
    shutil.copy(SCRIPTS / "module_equal_dims.py", script)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(script))
    doc = window.tabs.currentWidget()
    assert isinstance(doc, ScriptDocument)
    said = "Export requires a.shape[0] == b.shape[0]."
    assert doc.exports.item(0).text().endswith(said) and doc.progress_label.text().endswith(said)
    with qtbot.waitSignal(doc.problems.finished, timeout=TIMEOUT):
        doc.diagnose_button.click()
    text = doc.problems.browser.toPlainText()
    assert "export requires a.shape[0] == b.shape[0]" in text and "Verified fix (dynamic_shapes)" in text
    assert "-batch_b = Dim(\"batch_b\")\n+batch_b = batch_a" in text
    for shown in (text, doc.progress_label.text(), doc.exports.item(0).text(), doc.exports.item(0).toolTip()):
        assert not re.search(r"\b[su]\d+\b|L\[|Eq\(|unhinted", shown), shown
    doc.problems.confirm_apply = lambda name, diff: True
    with qtbot.waitSignal(doc.problems.file_changed, timeout=TIMEOUT):
        doc.problems.browser.anchorClicked.emit(QUrl("apply:0"))
    qtbot.waitUntil(lambda: not doc.running, timeout=TIMEOUT)
    assert [e.ok for e in doc.session.entries] == [True]
