"""The Run tab's advice when the worker's Python has no torch is one that takes effect: with PT2V_WORKER_PYTHON set,
choosing a Python in Preferences would change nothing (the variable decides), so the tab names the variable and says
to change or unset it (issue 43 §5). Through the window, with a real Python without torch (a bare venv)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.run.panel import CudaProbe
from pt2_viewer.core.jobs.python_env import HOW_TO_FIX
from tests.app.run.test_run_panel import JOB_TIMEOUT, open_run_tab
from tests.programs import REPO_ROOT

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"


@pytest.fixture(scope="module")
def python_without_torch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bare-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_a_python_set_by_the_environment_is_to_be_changed_there(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                python_without_torch: Path, monkeypatch) -> None:
    monkeypatch.setenv("PT2V_WORKER_PYTHON", str(python_without_torch))
    monkeypatch.delenv("PT2V_WORKER", raising=False)
    monkeypatch.setattr(CudaProbe, "_shared", None)  # ask this worker afresh
    _, panel = open_run_tab(qtbot, window, EXAMPLE)
    qtbot.waitUntil(lambda: panel.cuda_reason.text() != "", timeout=JOB_TIMEOUT)
    said = panel.cuda_reason.text()
    assert "has no torch" in said, said
    assert f"PT2V_WORKER_PYTHON is set to {python_without_torch}" in said and "unset it" in said
    assert HOW_TO_FIX not in said and HOW_TO_FIX not in panel.cuda_button.toolTip()

    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT):
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    for text in (panel.stage.text(), panel.failure.error.text()):
        assert HOW_TO_FIX not in text and "choose a Python" not in text.lower()
