"""File > Preferences: the Python that runs torch jobs, and what it has (torch version, CUDA devices, transformers).

The GUI never imports torch; exporting, decomposing and running happen in worker processes on a Python chosen by
core/jobs/python_env.py: PT2V_WORKER_PYTHON, else the one chosen here, else the default. A model exported from
transformers (or with a custom op library, or for CUDA) needs a Python that has those, hence this setting.

The choice is remembered in QSettings; so is what each Python was found to have, checked once in a subprocess
(QProcess: importing torch takes seconds, and never in the GUI process) and again only on "Check again".
"""
from __future__ import annotations

import json
import os

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.jobs.job_widgets import file_row
from pt2_viewer.core.jobs import python_env
from pt2_viewer.core.jobs.python_env import PythonProbe

SETTINGS_ORG, SETTINGS_APP = "pt2-viewer", "PT2 Viewer"  # as app/main_window.py
PYTHON_KEY = "worker/python"
PROBES_KEY = "worker/probes"  # JSON: {python path: PythonProbe.to_json()}


def settings() -> QSettings:
    return QSettings(SETTINGS_ORG, SETTINGS_APP)


def apply_saved_choice(store: QSettings | None = None) -> str | None:
    """Tell core which Python the user chose (at start-up and after OK); returns it (None: the default)."""
    chosen = str((store or settings()).value(PYTHON_KEY, "") or "") or None
    python_env.set_preferred(chosen)
    return chosen


def remembered_probe(python: str, store: QSettings | None = None) -> PythonProbe | None:
    probes = _probes(store or settings())
    data = probes.get(python)
    return PythonProbe.from_json(data) if isinstance(data, dict) else None


def remember_probe(probe: PythonProbe, store: QSettings | None = None) -> None:
    store = store or settings()
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


class PreferencesDialog(QDialog):
    """Emits `probed(PythonProbe)` each time a check of the shown Python ends."""

    probed = Signal(object)

    def __init__(self, store: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.store = store or settings()
        self.checker = PythonChecker(self)
        self.checker.probed.connect(self._probed)
        v = QVBoxLayout(self)
        v.addWidget(QLabel("<b>Python for torch jobs</b> (exporting scripts, decomposing, running programs)"))
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
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        v.addWidget(self.buttons)
        self.browse.clicked.connect(self._choose)
        self.check_button.clicked.connect(lambda: self.check(force=True))
        self.python.editingFinished.connect(lambda: self.check(force=False))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        env = os.environ.get(python_env.WORKER_PYTHON_ENV, "").strip()
        self.env_note.setText(f"{python_env.WORKER_PYTHON_ENV} is set to {env}: it wins over this setting."
                              if env else "")
        self.check(force=False)

    def chosen_python(self) -> str:
        """The Python the field names, or the default when it is empty."""
        return self.python.text().strip() or python_env.default_python()

    def check(self, force: bool) -> None:
        """Show what the chosen Python has: remembered, or checked now in a subprocess (always when `force`)."""
        python = self.chosen_python()
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
        if probe.python == self.chosen_python():
            self._show(probe)
        self.probed.emit(probe)

    def _show(self, probe: PythonProbe) -> None:
        lines = probe.summary_lines()
        self.status.setText(("" if probe.ok else "⚠ ") + "\n".join(lines))

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python that has torch", os.path.dirname(self.chosen_python()))
        if path:
            self.python.setText(path)
            self.check(force=False)

    def accept(self) -> None:
        self.store.setValue(PYTHON_KEY, self.python.text().strip())
        apply_saved_choice(self.store)  # the Run tab's CUDA probe asks again when the Python it asked is not this one
        self.checker.stop()
        super().accept()

    def reject(self) -> None:
        self.checker.stop()
        super().reject()


def _open(window: QWidget) -> PreferencesDialog:
    dialog = PreferencesDialog(parent=window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def add_preferences_action(window: QWidget, menu: QMenu) -> QAction:
    """The File > Preferences… entry; also applies the remembered choice, so jobs use it from the start."""
    apply_saved_choice()
    action = QAction("&Preferences…", window)
    action.setShortcut(QKeySequence(QKeySequence.StandardKey.Preferences))
    action.triggered.connect(lambda: _open(window))
    menu.addAction(action)
    return action
