"""What every view that runs a worker job shows alike: the failure box, a path field with its Browse button, and
the confirmation asked before a job runs a Python file of the user's (a table, an import-first file)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.platform.trust_dialog import confirm_run
from pt2_viewer.core.jobs.schemas.base import Schema, SchemaError
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.platform.trust import TrustStore

if TYPE_CHECKING:  # a type only: the window's File > Preferences needs this module, not the job driver
    from pt2_viewer.app.jobs.driver import WorkerDriver
    from pt2_viewer.core.jobs.client import JobOutcome

PY_FILTER = "Python files (*.py);;All files (*)"


def confirm_code(parent: QWidget, path: Path, trust: TrustStore, interactive: bool, what: str) -> str | None:
    """None when the user trusts the file (asking if needed, as for a script), else why it will not run."""
    if confirm_run(parent, path, trust, interactive=interactive):
        return None
    return (f"Not run: {what} '{path.name}' is Python code and has not been trusted. Confirm it in the window "
            "(PT2 Viewer asks again whenever the file changes).")


def file_row(edit: QLineEdit, button: QPushButton) -> QWidget:
    """A path field with its Browse button, as one form row."""
    row = QWidget()
    h = QHBoxLayout(row)
    h.setContentsMargins(0, 0, 0, 0)
    h.addWidget(edit, 1)
    h.addWidget(button)
    return row


class FailureBox(QWidget):
    """A job's failure: the message in bold red, and below it torch's detail and the job's output, hidden until
    there is a failure to show."""

    def __init__(self, detail_height: int = 180, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e; font-weight: bold")
        self.detail = QPlainTextEdit(readOnly=True)
        self.detail.setMaximumHeight(detail_height)
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(self.error)
        v.addWidget(self.detail)
        self.clear()

    def clear(self) -> None:
        self.error.setVisible(False)
        self.detail.setVisible(False)

    def show_failure(self, message: str, detail: str, log: list[str]) -> None:
        self.error.setText(message)
        self.error.setVisible(True)
        text = "\n".join(part for part in (detail, "\n".join(log[-200:])) if part)
        self.detail.setPlainText(text)
        self.detail.setVisible(bool(text))

R = TypeVar("R", bound=Schema)


class JobDialog(QDialog):
    """What the job dialogs (Decompose…, Lower to ExecuTorch…) share: a start button, one button that cancels the
    running job or closes, the worker's progress events shown on a bar and a stage line, and a failure box with the
    job's output. Subclasses make the widgets below and `driver`, connect `driver.event` to `_event` and the close
    button to `cancel_or_close`, and call `job_started`, `job_ended` and `show_failed` as their job goes."""

    driver: WorkerDriver
    progress: QProgressBar
    stage: QLabel
    start_button: QPushButton
    close_button: QPushButton
    failure: FailureBox
    log: list[str]
    out_dir: Path | None
    failed: Any  # the subclass's `Signal(str)`: the failure's message

    def make_driver(self, warm: str) -> None:
        """The dialog's worker, `warm` the program whose warm worker it may use: its progress to `_event`, its
        output kept in `log` (shown with a failure), its end to the subclass's `_finished(outcome)`."""
        from pt2_viewer.app.jobs.driver import WorkerDriver as Driver  # here: Preferences imports this module

        self.driver = Driver(self, warm=warm)
        self.driver.event.connect(self._event)
        self.driver.output.connect(lambda _stream, line: self.log.append(line))
        self.driver.finished.connect(self._finished)  # type: ignore[attr-defined]  # each subclass's own
        self.out_dir = None  # the running job's temporary folder
        self.log = []

    def make_job_widgets(self, start: str, detail_height: int = 160) -> None:
        """The widgets every job dialog has: the stage line, a hidden progress bar, the failure box, the start button
        (the default) and the close button that cancels a running job."""
        self.stage = QLabel("")
        self.stage.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setVisible(False)
        self.failure = FailureBox(detail_height)
        self.start_button = QPushButton(start)
        self.start_button.setDefault(True)
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.cancel_or_close)

    def cancel_or_close(self) -> None:
        if self.driver.running:
            self.driver.cancel()
        else:
            self.reject()

    def job_started(self) -> None:
        """The dialog while a job runs: an empty bar, start disabled, the close button cancels."""
        self.failure.clear()
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.stage.setText("Starting the worker…")
        self.start_button.setEnabled(False)
        self.close_button.setText("Cancel")
        self.log = []

    def job_ended(self) -> None:
        self.close_button.setText("Close")
        self.start_button.setEnabled(True)
        self.progress.setVisible(False)

    def show_failed(self, message: str, detail: str) -> None:
        """The job's folder removed, the failure shown with the job's output, and `failed` emitted."""
        temp_dirs.remove(self.out_dir)
        self.out_dir = None
        self.stage.setText("")
        self.failure.show_failure(message, detail, self.log)
        self.failed.emit(message)

    def read_result(self, outcome: JobOutcome, result_type: type[R]) -> R | None:
        """The finished job's result read through its schema; None, the failure shown, when it failed or its
        result cannot be read."""
        failure = outcome.failure_text()
        if failure is not None:
            self.show_failed(*failure)
            return None
        try:
            result = outcome.result_as(result_type)
        except SchemaError as e:
            self.show_failed(f"The worker's result cannot be read: {e}.", "")
            return None
        assert result is not None  # a job that ended well wrote its result (else failure_text says why)
        return result

    def _event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "progress":
            self.progress.setValue(int(float(event.get("fraction", 0.0)) * 100))
            self.stage.setText(str(event.get("message", "")))
