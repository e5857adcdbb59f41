"""Diagnose in a script's tab: the export doctor runs in the worker and the Problems tab lists every problem with the
user's line as a link (which opens the source there), torch's suggestion and the `torch._check` fix as a diff.
Offscreen; every wait is on a signal."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl

from pt2_viewer.app.export.script_document import ScriptDocument
from pt2_viewer.app.main_window import MainWindow
from tests.app.export.test_script_document import one_thread, window  # noqa: F401  (the same fixtures)
from tests.core.export.test_doctor import script_text

TIMEOUT = 240_000


def test_diagnose_lists_every_problem_with_its_fix_and_line(qtbot, window: MainWindow, tmp_path: Path) -> None:
    script = tmp_path / "data_dependent.py"
    script.write_text(script_text(), encoding="utf-8")
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(script))
    doc = window.tabs.currentWidget()
    assert isinstance(doc, ScriptDocument)
    with qtbot.waitSignal(doc.problems.finished, timeout=TIMEOUT) as done:
        doc.diagnose_button.click()
    assert doc.views.currentWidget() is doc.problems
    report = done.args[0]
    assert report is not None and [c.problems is not None for c in report.calls] == [True, True, True]
    text = doc.problems.browser.toPlainText()
    assert doc.problems.status.text().startswith("2 problems in 3 export calls")
    assert "data_dependent_error ×1 at data_dependent.py:" in text
    assert "fix: torch._check(a // 2 >= 5)" in text and "+        torch._check(a // 2 >= 5)" in text
    assert "torch's draft export could not diagnose this call" in text  # the fallback, said
    line = script.read_text().splitlines().index("        if a // 2 >= 5:") + 1
    with qtbot.waitSignal(doc.problems.source_requested) as clicked:
        doc.problems.browser.anchorClicked.emit(QUrl("line:0"))
    assert clicked.args == [str(script), line]


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
