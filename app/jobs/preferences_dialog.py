"""File > Preferences: the Python that runs torch jobs, and what it has (torch version, CUDA devices, transformers).

The GUI never imports torch; exporting, decomposing and running happen in worker processes on a Python chosen by
core/jobs/python_env.py: PT2V_WORKER_PYTHON, else the one chosen here, else the default. A model exported from
transformers (or with a custom op library, or for CUDA) needs a Python that has those, hence this setting.

The choice is remembered in QSettings; so is what each Python was found to have, checked once in a subprocess
(QProcess: importing torch takes seconds, and never in the GUI process) and again only on "Check again".

The worker may instead be a Python on another machine reached with ssh (core/jobs/remote/): `user@host[:port]`, the
server's Python and a scratch folder there. "Test connection" asks it (in a QProcess running ssh) for its torch
version, CUDA devices and free memory; the answer goes to `worker_probes().probed`, from which the Run and Numerics
tabs learn whether CUDA can be offered. The server's cache has a size cap, and a button empties it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QObject, QProcess, QProcessEnvironment, QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.jobs.job_widgets import file_row
from pt2_viewer.app.jobs.worker_choice import (  # the saved choice and its keys, read at start-up without this dialog
    CACHE_CAP_KEY,
    KIND_KEY,
    LOCAL,
    PROBES_KEY,
    PYTHON_KEY,
    SSH,
    SSH_HOST_KEY,
    SSH_PYTHON_KEY,
    SSH_SCRATCH_KEY,
    apply_saved_choice,
    default_cache_cap_gb,
    int_setting,
    ssh_url,
)
from pt2_viewer.app.settings import app_settings
from pt2_viewer.app.widgets.editor_choice import EditorSection
from pt2_viewer.core.jobs import python_env
from pt2_viewer.core.jobs.python_env import PythonProbe
from pt2_viewer.core.jobs.remote.probe import RemoteProbe, parse_remote_probe, probe_argv
from pt2_viewer.core.jobs.remote.ssh import SshCommand, failure
from pt2_viewer.core.jobs.remote.target import DEFAULT_SCRATCH, RemoteWorker, WorkerUrlError, parse_worker_url


class WorkerProbes(QObject):
    """Where the answers of Test connection go (`probed(RemoteProbe)`): the Run tab's CUDA probe listens, and
    `answers` keeps the last one per worker URL for a listener that comes later."""

    probed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.answers: dict[str, RemoteProbe] = {}

    def tell(self, probe: RemoteProbe) -> None:
        self.answers[probe.url] = probe
        self.probed.emit(probe)


_PROBES: WorkerProbes | None = None


def worker_probes() -> WorkerProbes:
    global _PROBES
    if _PROBES is None:
        _PROBES = WorkerProbes(QCoreApplication.instance())
    return _PROBES


def remembered_probe(python: str, store: QSettings | None = None) -> PythonProbe | None:
    probes = _probes(store or app_settings())
    data = probes.get(python)
    return PythonProbe.from_json(data) if isinstance(data, dict) else None


def remember_probe(probe: PythonProbe, store: QSettings | None = None) -> None:
    store = store or app_settings()
    probes = _probes(store)
    probes[probe.python] = probe.to_json()
    store.setValue(PROBES_KEY, json.dumps(probes))


def _probes(store: QSettings) -> dict[str, object]:
    try:
        data = json.loads(str(store.value(PROBES_KEY, "{}") or "{}"))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class PythonChecker(QObject):
    """Runs core's probe for one Python in a QProcess; `probed(PythonProbe)` when it answers (or cannot)."""

    probed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.process: QProcess | None = None
        self.python = ""

    @property
    def running(self) -> bool:
        return self.process is not None

    def check(self, python: str) -> None:
        self.stop()
        self.python = python
        proc = QProcess(self)
        env = QProcessEnvironment()
        for key, value in python_env.worker_environment().items():
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        command = python_env.probe_command(python)
        proc.finished.connect(lambda code, _status, p=proc: self._done(p, code))
        proc.errorOccurred.connect(lambda error, p=proc: self._failed(p, error))
        self.process = proc
        proc.start(command[0], command[1:])

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is not None:
            proc.kill()
            proc.waitForFinished(1000)
            proc.deleteLater()

    def _done(self, proc: QProcess, code: int) -> None:
        if proc is not self.process:
            return
        out = bytes(proc.readAllStandardOutput().data()).decode("utf-8", "replace")
        err = bytes(proc.readAllStandardError().data()).decode("utf-8", "replace")
        self.process = None
        proc.deleteLater()
        self.probed.emit(python_env.parse_probe(self.python, code, out, err))

    def _failed(self, proc: QProcess, error: QProcess.ProcessError) -> None:
        if proc is not self.process or error != QProcess.ProcessError.FailedToStart:
            return  # a crash is followed by `finished`, which reports it
        self.process = None
        proc.deleteLater()
        exists = os.path.exists(self.python)
        why = "cannot be run (not an executable)" if exists else "does not exist"
        self.probed.emit(PythonProbe(self.python, error=f"{self.python} {why}. {python_env.HOW_TO_FIX}"))


class AgentRun(QObject):
    """One agent command over ssh in a QProcess (Test connection, Empty): `done(returncode, stdout, stderr)`."""

    done = Signal(int, str, str)

    def __init__(self, argv: list[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.process = QProcess(self)
        self.process.finished.connect(self._finished)
        self.process.errorOccurred.connect(self._error)
        self.process.start(argv[0], argv[1:])

    @property
    def running(self) -> bool:
        return self.process.state() != QProcess.ProcessState.NotRunning

    def stop(self) -> None:
        if self.running:
            self.process.kill()
            self.process.waitForFinished(1000)

    def _finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        out = bytes(self.process.readAllStandardOutput().data()).decode("utf-8", "replace")
        err = bytes(self.process.readAllStandardError().data()).decode("utf-8", "replace")
        self.done.emit(code, out, err)

    def _error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.done.emit(127, "", f"{self.process.program()} could not be started: no such file or directory")


class RemoteSection(QGroupBox):
    """The SSH worker's fields, Test connection, and the server cache's cap and Empty button."""

    probed = Signal(object)  # RemoteProbe

    def __init__(self, store: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        self.host = QLineEdit(str(store.value(SSH_HOST_KEY, "") or ""))
        self.host.setPlaceholderText("user@host or user@host:port (as in ~/.ssh/config)")
        self.python = QLineEdit(str(store.value(SSH_PYTHON_KEY, "") or ""))
        self.python.setPlaceholderText("/home/me/venv/bin/python (the server's Python that has torch)")
        self.scratch = QLineEdit(str(store.value(SSH_SCRATCH_KEY, "") or ""))
        self.scratch.setPlaceholderText(f"default: {DEFAULT_SCRATCH}")
        form.addRow("Host", self.host)
        form.addRow("Python there", self.python)
        form.addRow("Scratch folder there", self.scratch)
        self.cap = QSpinBox(minimum=1, maximum=100_000, suffix=" GB")
        self.cap.setValue(int_setting(store.value(CACHE_CAP_KEY, default_cache_cap_gb()), default_cache_cap_gb()))
        self.cap.setToolTip("Programs and scripts copied to the server are kept there, oldest first out past this")
        self.empty_button = QPushButton("Empty the server's cache")
        row = QWidget()
        h = QHBoxLayout(row)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(self.cap)
        h.addWidget(self.empty_button)
        form.addRow("Cache cap", row)
        self.test_button = QPushButton("Test connection")
        form.addRow(self.test_button)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.status)
        self.run: AgentRun | None = None
        self.test_button.clicked.connect(self.test)
        self.empty_button.clicked.connect(self.empty)

    def target(self) -> RemoteWorker | None:
        """The worker the fields name; None (and the reason shown) when they do not name one."""
        try:
            return parse_worker_url(ssh_url(self.host.text(), self.python.text()),
                                    self.scratch.text().strip() or DEFAULT_SCRATCH)
        except WorkerUrlError:
            self.status.setText("⚠ Give the host as user@host (or user@host:port) and the absolute path of the "
                                "server's Python, e.g. /home/me/venv/bin/python.")
            return None

    def test(self) -> None:
        target = self.target()
        if target is None:
            return
        self.status.setText(f"Connecting to {target.destination} (importing torch there takes a few seconds)…")
        self._start(probe_argv(target), lambda code, out, err: self._probed(target, code, out, err))

    def empty(self) -> None:
        target = self.target()
        if target is None:
            return
        self.status.setText(f"Emptying the cache in {target.scratch} on {target.destination}…")
        self._start(SshCommand.for_target(target).argv("empty", target.scratch),
                    lambda code, out, err: self._emptied(target, code, err))

    def stop(self) -> None:
        if self.run is not None:
            self.run.stop()
            self.run = None

    def _start(self, argv: list[str], then: object) -> None:
        self.stop()
        self.run = AgentRun(argv, self)
        self.run.done.connect(then)

    def _probed(self, target: RemoteWorker, code: int, out: str, err: str) -> None:
        self.run = None
        self.show_probe(parse_remote_probe(target, code, out, err))

    def show_probe(self, probe: RemoteProbe) -> None:
        self.status.setText(("" if probe.ok else "⚠ ") + "\n".join(probe.summary_lines()))
        self.probed.emit(probe)
        worker_probes().tell(probe)

    def _emptied(self, target: RemoteWorker, code: int, err: str) -> None:
        self.run = None
        problem = failure(target, code, err)
        self.status.setText(f"⚠ {problem.message}" if problem is not None else
                            f"The cache on {target.destination} is empty." if code == 0 else
                            f"⚠ Emptying the cache failed: {err.strip() or code}")


class PreferencesDialog(QDialog):
    """Emits `probed(PythonProbe)` each time a check of the shown Python ends."""

    probed = Signal(object)

    def __init__(self, store: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.store = store or app_settings()
        self.checker = PythonChecker(self)
        self.checker.probed.connect(self._probed)
        v = QVBoxLayout(self)
        v.addWidget(QLabel("<b>Worker for torch jobs</b> (exporting scripts, decomposing, running programs)"))
        self.local_choice = QRadioButton("This machine's Python")
        self.ssh_choice = QRadioButton("A Python on another machine, over SSH")
        self.kind = QButtonGroup(self)
        for button in (self.local_choice, self.ssh_choice):
            self.kind.addButton(button)
        (self.ssh_choice if str(self.store.value(KIND_KEY, LOCAL)) == SSH else self.local_choice).setChecked(True)
        v.addWidget(self.local_choice)
        self.python = QLineEdit(str(self.store.value(PYTHON_KEY, "") or ""))
        self.python.setPlaceholderText(f"default: {python_env.default_python()}")
        self.browse = QPushButton("Browse…")
        v.addWidget(file_row(self.python, self.browse))
        self.env_note = QLabel("")
        self.env_note.setWordWrap(True)
        v.addWidget(self.env_note)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setMinimumWidth(520)
        v.addWidget(self.status)
        self.check_button = QPushButton("Check again")
        v.addWidget(self.check_button)
        v.addWidget(self.ssh_choice)
        self.remote = RemoteSection(self.store, self)
        v.addWidget(self.remote)
        self.editor = EditorSection(self.store, self)  # where source links open (app/widgets/editor_choice.py)
        v.addWidget(self.editor)
        self.kind.buttonToggled.connect(lambda *_args: self._kind_changed())
        self._kind_changed()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        v.addWidget(self.buttons)
        self.browse.clicked.connect(self._choose)
        self.check_button.clicked.connect(lambda: self.check(force=True))
        self.python.editingFinished.connect(lambda: self.check(force=False))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.override = environment_worker()
        self.env_note.setText(self.override.note if self.override is not None else "")
        self.check(force=False)

    def chosen_python(self) -> str:
        """The Python the field names, or the default when it is empty."""
        return self.python.text().strip() or python_env.default_python()

    def checked_python(self) -> str:
        """The Python the status line checks: the one jobs will use. An environment variable that wins over the
        field is that Python (the field is kept for when it is unset); else the field's."""
        return self.override.path if self.override is not None else self.chosen_python()

    def check(self, force: bool) -> None:
        """Show what the Python jobs will use has: remembered, or checked now in a subprocess (always when
        `force`). A remote worker named by the environment is not checked here (Test connection does that)."""
        if self.override is not None and self.override.remote:
            self.status.setText(f"Jobs run on {self.override.path}, as the environment says.")
            return
        python = self.checked_python()
        known = None if force else remembered_probe(python, self.store)
        if known is not None:
            self._show(known)
            return
        if self.checker.running and self.checker.python == python:
            return
        self.status.setText(f"Checking {python} (importing torch takes a few seconds)…")
        self.checker.check(python)

    def _probed(self, probe: PythonProbe) -> None:
        remember_probe(probe, self.store)
        if probe.python == self.checked_python():
            self._show(probe)
        self.probed.emit(probe)

    def _show(self, probe: PythonProbe) -> None:
        lines = probe.summary_lines()
        self.status.setText(("" if probe.ok else "⚠ ") + "\n".join(lines))
        self.fit_height()

    def fit_height(self) -> None:
        """Grow to the height the wrapped texts now need at this width (a dialog, once shown, keeps its size, and
        a three-line answer was cut to its first line over the next field)."""
        layout = self.layout()
        need = layout.totalHeightForWidth(self.width()) if layout is not None and layout.hasHeightForWidth() else -1
        if need > self.height():
            self.resize(self.width(), need)

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python that has torch", os.path.dirname(self.chosen_python()))
        if path:
            self.python.setText(path)
            self.check(force=False)

    def _kind_changed(self) -> None:
        local = self.local_choice.isChecked()
        for widget in (self.python, self.browse, self.check_button, self.status):
            widget.setEnabled(local)
        self.remote.setEnabled(not local)

    def accept(self) -> None:
        if self.ssh_choice.isChecked() and self.remote.target() is None:
            return  # the fields do not name a worker: the section says why
        self.store.setValue(PYTHON_KEY, self.python.text().strip())
        self.store.setValue(KIND_KEY, SSH if self.ssh_choice.isChecked() else LOCAL)
        self.store.setValue(SSH_HOST_KEY, self.remote.host.text().strip())
        self.store.setValue(SSH_PYTHON_KEY, self.remote.python.text().strip())
        self.store.setValue(SSH_SCRATCH_KEY, self.remote.scratch.text().strip())
        self.store.setValue(CACHE_CAP_KEY, self.remote.cap.value())
        self.editor.save()
        apply_saved_choice(self.store)  # the Run tab's CUDA probe asks again when the worker it asked is not this one
        self.checker.stop()
        self.remote.stop()
        super().accept()

    def reject(self) -> None:
        self.checker.stop()
        self.remote.stop()
        super().reject()


@dataclass(frozen=True)
class EnvironmentWorker:
    """A worker an environment variable names, which wins over the dialog's choice (core/jobs/python_env.py)."""

    path: str
    variable: str

    @property
    def remote(self) -> bool:
        return self.path.startswith("ssh://")

    @property
    def note(self) -> str:
        checked = "" if self.remote else " The check below is of that Python."
        return (f"{self.variable} is set to {self.path}: it wins over this setting, so jobs run there.{checked} "
                "Unset it to use the Python chosen here.")


def environment_worker() -> EnvironmentWorker | None:
    """The worker PT2V_WORKER or PT2V_WORKER_PYTHON names, as `choose_worker` picks it; None when neither is set."""
    chosen = python_env.choose_worker()
    if chosen.source != python_env.FROM_ENV:
        return None
    variable = (python_env.WORKER_ENV if os.environ.get(python_env.WORKER_ENV, "").strip()
                else python_env.WORKER_PYTHON_ENV)
    return EnvironmentWorker(chosen.path, variable)


def open_preferences(window: QWidget) -> PreferencesDialog:
    """File > Preferences…: the dialog, deleted when closed."""
    dialog = PreferencesDialog(parent=window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
