"""The tab of a script run under torch.compile's trace (File > Open of a script, "Run with torch.compile's trace"):
the `trace_script` job (core/export/trace_job.py: a fresh worker, `TORCH_TRACE`, provenance tracking on, the
compile caches off) with its progress, the script's output and Cancel, as a script's export tab has them.

When the script has run and torch wrote a trace (also when the script stopped with an error: the trace up to there),
`trace_ready(folder)` names the folder, which the window opens through the format registry as any trace folder.
The folder is one of the app's temporary folders and lives until the app quits (core/platform/temp_dirs.py): the
trace's tab reads a graph's text from its logs when the graph is asked for, after this tab may have closed."""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.jobs.driver import WorkerDriver
from pt2_viewer.app.panels import fixed_font
from pt2_viewer.app.widgets.common import append_output, busy_bar
from pt2_viewer.core.jobs.client import JobOutcome, default_memory_mb
from pt2_viewer.core.jobs.kinds import TRACE_SCRIPT
from pt2_viewer.core.jobs.schemas.trace import TRACE_FOLDER, TraceRequest
from pt2_viewer.core.platform import temp_dirs

LOG_MAX_LINES = 20000


class TraceRunTab(DocumentTab):
    """One script run under `TORCH_TRACE`: progress, the script's output, Cancel; then its trace is handed on."""

    trace_ready = Signal(str)  # the trace folder, once the job has ended with a trace in it
    run_ended = Signal(str)  # how the run ended, in words (also when there is no trace to open)

    def __init__(self, script: str | Path, *, memory_limit_mb: int | None = None, timeout_s: float | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.script = Path(script)
        self.memory_limit_mb = memory_limit_mb or default_memory_mb()
        self.timeout_s = timeout_s
        self.folder = temp_dirs.new_dir(f"trace-{self.script.stem}")
        self.driver = WorkerDriver(self)
        self.driver.event.connect(self._event)
        self.driver.output.connect(self._output)
        self.driver.finished.connect(self._finished)
        heading = QLabel(f"<b>{html.escape(self.script.name)}</b> under torch.compile's trace "
                         f"<span style='color:gray'>{html.escape(str(self.script))}</span>")
        heading.setWordWrap(True)
        self.progress_label = QLabel("Starting the worker…")
        self.progress_label.setWordWrap(True)
        self.progress = busy_bar()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(LOG_MAX_LINES)
        self.log_view.setFont(fixed_font())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(heading)
        layout.addWidget(self.progress_label)
        layout.addLayout(row)
        layout.addWidget(self.log_view, 1)

    @property
    def trace_folder(self) -> Path:
        """Where the trace is once the run has ended: the job's `trace` folder named for the script (the trace's
        tab is titled by its folder's name)."""
        return self.folder / f"{self.script.stem}-trace"

    def source_file(self) -> str | None:
        return str(self.script)

    def start(self) -> None:
        self.driver.start(TRACE_SCRIPT.name, TraceRequest(script=str(self.script)), self.folder,
                          memory_limit_mb=self.memory_limit_mb, timeout_s=self.timeout_s)

    def cancel(self) -> None:
        self.driver.cancel()

    @property
    def running(self) -> bool:
        return self.driver.running

    def release(self) -> None:
        self.driver.cancel()  # the folder stays: a trace tab opened from it reads its logs on demand

    def _event(self, event: dict) -> None:
        if event.get("type") == "progress" and event.get("message"):
            self._say(str(event["message"]))


    def _output(self, stream: str, text: str) -> None:
        append_output(self.log_view, stream, text)

    def _finished(self, outcome: JobOutcome) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        logs = ((outcome.result or {}).get("logs") or []) if outcome.ok else []  # the script may have failed
        if logs:
            try:
                (self.folder / TRACE_FOLDER).rename(self.trace_folder)
            except OSError as e:
                logs = []
                self.log_view.appendPlainText(f"The trace could not be moved to {self.trace_folder}: {e}")
        failed = outcome.failure_text()
        ended = failed[0] if failed is not None else f"{self.script.name} ran under torch.compile's trace."
        if failed is not None and failed[1]:
            self.log_view.appendPlainText(failed[1])
        if logs:
            ended += f" Its trace is in {self.trace_folder}, opened in its own tab."
        elif failed is None:
            ended += " It compiled nothing with torch.compile, so torch wrote no trace."
        self._say(ended)
        self.run_ended.emit(ended)
        if logs:
            self.trace_ready.emit(str(self.trace_folder))

    def _say(self, text: str) -> None:
        self.progress_label.setText(text)
        self.status.emit(f"{self.script.name}: {text}")
