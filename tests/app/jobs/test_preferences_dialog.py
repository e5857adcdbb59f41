"""File > Preferences: the Python that runs torch jobs. Checked in a subprocess (real probes of real Pythons: this
venv's, a fresh venv without torch, a path that does not exist), remembered in QSettings with what it had, and handed
to core so the next worker job uses it; PT2V_WORKER_PYTHON, when set, is said to win. Offscreen, no sleeps."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from pt2_viewer.app.jobs.preferences_dialog import PYTHON_KEY, PreferencesDialog, remembered_probe
from pt2_viewer.app.settings import app_settings
from pt2_viewer.core.jobs import python_env
from pt2_viewer.core.jobs.python_env import FROM_PREFERENCES, WORKER_PYTHON_ENV
from tests.pythons import python_without_torch  # noqa: F401  (a fixture)

PROBE_TIMEOUT = 120_000  # importing torch and transformers on a shared two-core machine


@pytest.fixture(autouse=True)
def fresh_settings(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.delenv(WORKER_PYTHON_ENV, raising=False)
    monkeypatch.delenv(python_env.WORKER_ENV, raising=False)
    app_settings().clear()
    python_env.set_preferred(None)
    yield
    app_settings().clear()
    python_env.set_preferred(None)


def test_the_chosen_python_is_checked_remembered_and_used(qtbot,  # type: ignore[no-untyped-def]
                                                          python_without_torch: Path) -> None:  # noqa: F811
    dialog = PreferencesDialog()
    qtbot.addWidget(dialog)
    assert sys.executable in dialog.python.placeholderText()  # empty field: the default, this Python
    qtbot.waitUntil(lambda: remembered_probe(sys.executable) is not None, timeout=PROBE_TIMEOUT)
    assert f"torch {torch.__version__}" in dialog.status.text() and "transformers" in dialog.status.text()

    dialog.python.setText(str(python_without_torch))
    with qtbot.waitSignal(dialog.probed, timeout=PROBE_TIMEOUT) as blocker:
        dialog.check(force=False)
    assert not blocker.args[0].ok
    assert f"{python_without_torch}, has no torch" in dialog.status.text()
    assert "File > Preferences" in dialog.status.text()
    dialog.accept()
    assert app_settings().value(PYTHON_KEY) == str(python_without_torch)
    assert python_env.choose_worker_python() == python_env.WorkerPython(str(python_without_torch), FROM_PREFERENCES)

    again = PreferencesDialog()  # what each Python had is remembered: no second probe
    qtbot.addWidget(again)
    assert again.python.text() == str(python_without_torch) and not again.checker.running
    assert "has no torch" in again.status.text()
    again.python.setText("")
    again.check(force=False)
    assert not again.checker.running and f"torch {torch.__version__}" in again.status.text()
    again.accept()
    assert python_env.choose_worker_python().path == sys.executable


def test_a_missing_python_is_explained(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = PreferencesDialog()
    qtbot.addWidget(dialog)
    missing = tmp_path / "nowhere" / "python3"
    dialog.python.setText(str(missing))
    with qtbot.waitSignal(dialog.probed, timeout=PROBE_TIMEOUT,
                          check_params_cb=lambda probe: probe.python == str(missing)):
        dialog.check(force=True)
    assert f"{missing} does not exist" in dialog.status.text()
    dialog.reject()
    assert python_env.preferred() is None  # Cancel keeps the old choice


def test_the_environment_variable_wins_and_is_the_python_checked(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python_without_torch: Path) -> None:  # noqa: F811
    """Issue 30: the dialog said PT2V_WORKER_PYTHON wins, then checked the field's Python. The status line is about
    the Python jobs will use, whatever the field says (the field is kept for when the variable is unset)."""
    monkeypatch.setenv(WORKER_PYTHON_ENV, str(python_without_torch))
    dialog = PreferencesDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    note = dialog.env_note.text()
    assert f"{WORKER_PYTHON_ENV} is set to {python_without_torch}: it wins" in note
    assert "The check below is of that Python" in note
    dialog.python.setText(sys.executable)  # a Python with torch in the field: not the one jobs use
    with qtbot.waitSignal(dialog.probed, timeout=PROBE_TIMEOUT,
                          check_params_cb=lambda probe: probe.python == str(python_without_torch)):
        dialog.check(force=True)
    assert f"{python_without_torch}, has no torch" in dialog.status.text()
    assert f"torch {torch.__version__}" not in dialog.status.text()
    # the three-line answer is whole, not cut over the next field: the dialog is as tall as its texts need
    assert dialog.height() >= dialog.layout().totalHeightForWidth(dialog.width())
    dialog.accept()
    assert app_settings().value(PYTHON_KEY) == sys.executable  # kept for when the variable is unset
    assert python_env.choose_worker_python().path == str(python_without_torch)


def test_preferences_is_in_the_file_menu(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    file_menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "&File")
    action = next(a for a in file_menu.actions() if a.text() == "&Preferences…")
    assert action is window.preferences_action
    action.trigger()
    dialog = window.findChild(PreferencesDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.reject()
