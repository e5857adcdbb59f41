"""The script tab's Problems view: Diagnose runs the script once more with the export doctor on (torch's draft export
beside each call, core/export/doctor.py) and lists every problem of every call in one pass: its kind and count, the
user's source line as a link, torch's suggestion, and the fix (a `torch._check` to add at that line, or a changed
`dynamic_shapes`) as a diff. Only verified fixes have a diff (the worker re-exported a patched copy); each has an
"Apply to file" link, which shows the diff and writes it to the user's file only when the user confirms
(`confirm_apply`), keeping the original as NAME.py.orig (NAME.py.orig2… when taken, the dialog naming the one it will
write), then asks for a re-export (`file_changed`). A problem without a verified fix shows the reason in words, and
the fixes that were tried with their failure.
The job and the findings are core's; this view only shows them and sends clicks back.
"""
from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from pt2_viewer.app.export.apply_dialog import ApplyDialog
from pt2_viewer.app.jobs.driver import WorkerDriver
from pt2_viewer.core.export.doctor import Diagnosis
from pt2_viewer.core.export.failures import SourceLine
from pt2_viewer.core.export.fixes.apply import PatchError, Written, apply_to_files, split_files, undo
from pt2_viewer.core.export.report import REPORT_FILE, ExportReport, read_report
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.schemas.export import ExportRequest
from pt2_viewer.core.util.words import plural

JOB = "export_script"


class DiagnosePanel(QWidget):
    """Run the doctor on a script and show what it found; `source_requested(file, line)` on a line's link."""

    source_requested = Signal(str, int)
    finished = Signal(object)  # the ExportReport read back, or None when the job failed
    file_changed = Signal(str)  # "Apply to file" wrote a verified fix to the script: re-export it
    draft_requested = Signal(str)  # the draft program's .pt2, to open as a tab

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
        self._diffs: list[str] = []
        self.applied: list[Written] = []  # files the last "Apply to file" changed, and their kept originals
        self.report: ExportReport | None = None
        # asks the user to confirm a diff before it is written; tests replace it (the window never writes unasked)
        self.confirm_apply: Callable[[str, str], bool] = self._ask

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
        self.driver.start(JOB, ExportRequest(script=str(script), diagnose=True), out, memory_limit_mb=memory_limit_mb,
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
        self._lines, self._diffs = [], []
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
            if p.diff:
                self._diffs.append(p.diff)
                parts.append(f"<br><b>Verified fix</b> ({html.escape(p.fix_kind)}): with it the call exports."
                             + (f" Note: {html.escape(p.narrows)}." if p.narrows else "")
                             + f" <a href='apply:{len(self._diffs) - 1}'>Apply to file…</a>")
            if p.reason:
                parts.append(f"<br><i>{html.escape(p.reason)}</i>")
            for t in p.tried:
                verdict = t.get("problem_gone")  # true, false, or none when the check could not tell
                gone = "" if verdict is None else \
                    " (this problem itself is gone)" if verdict else " (this problem remains)"
                parts.append(f"<br>tried <code>{html.escape(str(t.get('fix', '')))}</code>{gone}: the call still "
                             f"fails: {html.escape(str(t.get('failure', '')))}")
            parts.append("</p>")
            if p.diff:
                parts.append(f"<pre>{html.escape(p.diff)}</pre>")
        if d.pt2:
            parts.append(f"<p>The program draft export produced anyway: <a href='draft:{html.escape(d.pt2)}'>"
                         f"open {html.escape(d.pt2)} as a tab</a></p>")
        return "".join(parts)

    def _anchor(self, line: SourceLine) -> str:
        self._lines.append(line)
        text = f"{Path(line.file).name}:{line.line}"
        code = f" <code>{html.escape(line.code)}</code>" if line.code else ""
        return f"<a href='line:{len(self._lines) - 1}'>{html.escape(text)}</a>{code}"

    def apply_diff(self, index: int) -> bool:
        """Show the verified diff; on the user's yes write it to the script (NAME.py.orig kept) and ask for a
        re-export. True when the file was changed."""
        if self.report is None or not 0 <= index < len(self._diffs):
            return False
        diff, script = self._diffs[index], Path(self.report.script)
        names = [Path(name).name for name in split_files(diff)] or [script.name]
        if not self.confirm_apply(" and ".join(names), diff):  # every file the fix writes, named
            self.status.setText("Nothing was written: the fix was not applied.")
            return False
        try:
            self.applied = apply_to_files(diff, script.parent)
        except (PatchError, OSError) as e:
            self.status.setText(f"The fix was not applied: {e}")
            return False
        changed = ", ".join(w.path.name for w in self.applied)
        kept = ", ".join(w.original.name for w in self.applied)
        self.status.setText(f"Applied the fix to {changed} (the original is kept as {kept}; Undo puts it back). "
                            "Exporting again…")
        self.file_changed.emit(str(script))
        return True

    def undo_apply(self) -> None:
        undo(self.applied)
        self.applied = []

    def _ask(self, name: str, diff: str) -> bool:
        narrows = next((p.narrows for c in (self.report.calls if self.report else []) if c.problems
                        for p in c.problems.items if p.diff == diff), "")
        base = Path(self.report.script).parent if self.report else Path.cwd()
        return ApplyDialog.for_fix(name, diff, base, narrows, self).exec() == ApplyDialog.DialogCode.Accepted

    def _link(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith("draft:") and self._out is not None:
            self.draft_requested.emit(str(self._out / Path(text[6:]).name))
            return
        if text.startswith("apply:"):
            self.apply_diff(int(text[6:]))
            return
        if text.startswith("line:"):
            line = self._lines[int(text[5:])]
            self.source_requested.emit(line.file, line.line)
