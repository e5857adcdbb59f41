"""The script tab's Problems view: Diagnose runs the script once more with the export doctor on (torch's draft export
beside each call, core/export/doctor.py) and lists every problem of every call in one pass: its kind and count, the
user's source line as a link, torch's suggestion, and the fix (a `torch._check` to add at that line, or a changed
`dynamic_shapes`) as a diff. The job and the findings are core's; this view only shows them and sends clicks back.
"""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from pt2_viewer.app.jobs.driver import WorkerDriver
from pt2_viewer.core.export.doctor import Diagnosis
from pt2_viewer.core.export.failures import SourceLine
from pt2_viewer.core.export.report import REPORT_FILE, ExportReport, read_report
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.util.words import plural

JOB = "export_script"


class DiagnosePanel(QWidget):
    """Run the doctor on a script and show what it found; `source_requested(file, line)` on a line's link."""

    source_requested = Signal(str, int)
    finished = Signal(object)  # the ExportReport read back, or None when the job failed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = QLabel("Diagnose lists every export problem of the script in one pass (torch's draft export).")
        self.status.setWordWrap(True)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._link)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.status)
        layout.addWidget(self.browser, 1)
        self.driver = WorkerDriver(self)
        self.driver.finished.connect(self._finished)
        self._out: Path | None = None
        self._lines: list[SourceLine] = []
        self.report: ExportReport | None = None

    @property
    def running(self) -> bool:
        return self.driver.running

    def start(self, script: Path, out: Path, *, memory_limit_mb: int | None = None,
              timeout_s: float | None = None) -> None:
        if self.driver.running:
            return
        self._out = out
        self.status.setText(f"Diagnosing {script.name}: running it with torch's draft export beside each call…")
        self.browser.clear()
        self.driver.start(JOB, {"script": str(script), "diagnose": True}, out, memory_limit_mb=memory_limit_mb,
                          timeout_s=timeout_s)

    def cancel(self) -> None:
        self.driver.cancel()

    def _finished(self, outcome: JobOutcome) -> None:
        self.report = None
        if outcome.status == protocol.OK and self._out is not None:
            try:
                self.report = read_report(self._out / REPORT_FILE)
            except (OSError, ValueError, KeyError, TypeError) as e:
                self.status.setText(f"Diagnose could not read its report ({type(e).__name__}: {e}).")
        else:
            self.status.setText(f"Diagnose did not finish: {outcome.message}")
        if self.report is not None:
            self.show_report(self.report)
        self.finished.emit(self.report)

    def show_report(self, report: ExportReport) -> None:
        self._lines = []
        found = [(c, c.problems) for c in report.calls if c.problems is not None]
        total = sum(len(d.items) for _, d in found)
        self.status.setText(f"{plural(total, 'problem')} in {plural(len(report.calls), 'export call')}."
                            + ("" if report.ok else " The script itself stopped with an error (see Explanation)."))
        self.browser.setHtml("".join(self._call_html(c.index, c.model, c.ok, d) for c, d in found)
                             or "<p>The script made no export call.</p>")

    def _call_html(self, index: int, model: str, ok: bool, d: Diagnosis) -> str:
        state = "exported" if ok else "failed"
        parts = [f"<h3>#{index} {html.escape(model)} ({state}): {plural(len(d.items), 'problem')}"
                 f" <small>({'draft export' if d.method == 'draft_export' else 'first failure only'})</small></h3>"]
        if d.note:
            parts.append(f"<p><i>{html.escape(d.note)}</i></p>")
        for p in d.items:
            where = self._anchor(p.user_line) if p.user_line else "no line of the script"
            parts.append(f"<p><b>{html.escape(p.kind)}</b> ×{p.count} at {where}<br>{html.escape(p.message)}")
            if p.suggestion:
                parts.append(f"<br>torch suggests: {html.escape(p.suggestion)}")
            if p.fix:
                parts.append(f"<br>fix: <code>{html.escape(p.fix)}</code>")
            parts.append("</p>")
            if p.diff:
                parts.append(f"<pre>{html.escape(p.diff)}</pre>")
        if d.pt2:
            parts.append(f"<p>The program draft export produced anyway: {html.escape(d.pt2)}</p>")
        return "".join(parts)

    def _anchor(self, line: SourceLine) -> str:
        self._lines.append(line)
        text = f"{Path(line.file).name}:{line.line}"
        code = f" <code>{html.escape(line.code)}</code>" if line.code else ""
        return f"<a href='line:{len(self._lines) - 1}'>{html.escape(text)}</a>{code}"

    def _link(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith("line:"):
            line = self._lines[int(text[5:])]
            self.source_requested.emit(line.file, line.line)
