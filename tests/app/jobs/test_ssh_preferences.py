"""File > Preferences > Worker, an SSH worker: Test connection against a real sshd (tests/core/jobs/ssh_server.py)
reports the server's torch, CUDA devices and memory; OK hands the ssh:// worker to core; the server's cache can be
emptied. CUDA Run and the Numerics `cuda` candidate follow the probe's answer, tested from an answer that names a
device (no GPU is lent to the tests). Offscreen, no sleeps."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from PySide6.QtCore import Qt

from pt2_viewer.app.jobs.preferences_dialog import KIND_KEY, SSH, PreferencesDialog, worker_probes
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.run.panel import CudaProbe
from pt2_viewer.app.settings import app_settings
from pt2_viewer.core.jobs import python_env
from pt2_viewer.core.jobs.remote.job import RemoteJob
from pt2_viewer.core.jobs.remote.probe import RemoteProbe
from tests.app.run.test_run_panel import mlp, open_run_tab  # noqa: F401  (mlp is a fixture)
from tests.core.jobs.ssh_server import HOST_ALIAS, SshServer, ssh_server  # noqa: F401  (a fixture)

PROBE_TIMEOUT = 120_000  # ssh, then importing torch on the server: a shared two-core machine
GPU_ANSWER = {"python": "/opt/venv/bin/python", "python_version": "3.11.7", "host": "gpu-7",
              "memory": {"total": 540 * 2**30, "available": 500 * 2**30}, "scratch_bytes": 0,
              "torch_version": "2.13.0+cu126", "torch_cuda": "12.6",
              "cuda_devices": [{"name": "NVIDIA H100 80GB HBM3", "free": 80 * 2**30, "total": 85 * 2**30}]}


@pytest.fixture(autouse=True)
def fresh_settings(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for key in (python_env.WORKER_PYTHON_ENV, python_env.WORKER_ENV):
        monkeypatch.delenv(key, raising=False)
    app_settings().clear()
    python_env.set_preferred(None)
    yield
    app_settings().clear()
    python_env.set_preferred(None)


def test_test_connection_reports_the_server_and_ok_chooses_it(qtbot, ssh_server: SshServer,  # type: ignore[no-untyped-def]
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PT2V_SSH_COMMAND", ssh_server.ssh_command)
    dialog = PreferencesDialog()
    qtbot.addWidget(dialog)
    dialog.checker.stop()
    assert not dialog.remote.isEnabled()  # this machine's Python is the choice until the user picks SSH
    dialog.ssh_choice.setChecked(True)
    assert dialog.remote.isEnabled() and not dialog.python.isEnabled()
    dialog.remote.python.setText("not/absolute")
    dialog.remote.host.setText(HOST_ALIAS)
    dialog.remote.test()
    assert "absolute path" in dialog.remote.status.text() and dialog.remote.run is None
    dialog.remote.python.setText(ssh_server.python)
    dialog.remote.scratch.setText(str(ssh_server.scratch))
    with qtbot.waitSignal(worker_probes().probed, timeout=PROBE_TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.remote.test_button, Qt.MouseButton.LeftButton)
    probe = blocker.args[0]
    assert probe.ok, probe.error
    text = dialog.remote.status.text()
    assert f"torch {torch.__version__}" in text and "CPU-only build" in text and "memory:" in text
    assert probe.cuda() == (False, f"torch on {probe.host} is a CPU-only build")
    dialog.accept()
    assert app_settings().value(KIND_KEY) == SSH
    chosen = python_env.choose_worker()
    assert chosen.remote and chosen.path == f"ssh://{HOST_ALIAS}{ssh_server.python}"
    assert python_env.preferred_scratch() == str(ssh_server.scratch)
    assert CudaProbe.shared().ask() == CudaProbe.shared()._tested[chosen.path]  # known without running a job

    again = PreferencesDialog()  # remembered
    qtbot.addWidget(again)
    again.checker.stop()
    assert again.ssh_choice.isChecked() and again.remote.host.text() == HOST_ALIAS
    (ssh_server.scratch / "files").mkdir(parents=True, exist_ok=True)
    (ssh_server.scratch / "files" / "old").write_bytes(b"x" * 10)
    qtbot.mouseClick(again.remote.empty_button, Qt.MouseButton.LeftButton)
    assert again.remote.run is not None
    with qtbot.waitSignal(again.remote.run.done, timeout=PROBE_TIMEOUT):
        pass
    assert "is empty" in again.remote.status.text() and not (ssh_server.scratch / "files").exists()
    again.reject()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_server_with_a_gpu_enables_cuda_run(qtbot, window: MainWindow, mlp: Path,  # type: ignore[no-untyped-def]  # noqa: F811
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CudaProbe, "_shared", None)
    url = "ssh://ana@gpu-7/opt/venv/bin/python"
    python_env.set_preferred(url)
    answer = RemoteProbe.from_json({**GPU_ANSWER, "url": url, "ok": True})
    assert answer.cuda() == (True, "")
    worker_probes().tell(answer)  # what Test connection does once the server answered
    _, panel = open_run_tab(qtbot, window, mlp)
    qtbot.waitUntil(lambda: panel.cuda_button.isEnabled(), timeout=30_000)
    assert panel.cuda_button.toolTip() == "Run on the GPU"
    python_env.set_preferred(None)  # back on this machine's Python: the server's answer is not this worker's
    assert CudaProbe.shared().python == url and python_env.choose_worker().path != url


def test_the_window_s_jobs_go_to_the_chosen_server(qtbot, ssh_server: SshServer,  # type: ignore[no-untyped-def]
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The Run tab's CUDA question is a run job: with an SSH worker chosen it runs there, through the GUI's driver."""
    monkeypatch.setenv("PT2V_SSH_COMMAND", ssh_server.ssh_command)
    monkeypatch.setattr(CudaProbe, "_shared", None)
    monkeypatch.setattr(worker_probes(), "answers", {})  # no Test connection answer: the question is a job
    python_env.set_preferred(ssh_server.url, str(ssh_server.scratch))  # as OK in Preferences does
    probe = CudaProbe.shared()
    with qtbot.waitSignal(probe.known, timeout=PROBE_TIMEOUT) as blocker:
        assert probe.ask() is None
    assert not blocker.args[0].available and probe.python == ssh_server.url
    assert isinstance(probe.driver.job, RemoteJob) and probe.driver.job.remote["python"] == ssh_server.python


def test_a_script_folder_past_the_cap_is_copied_once_the_user_says_yes(qtbot, ssh_server: SshServer,  # type: ignore[no-untyped-def]
                                                                       tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QMessageBox, QWidget

    from pt2_viewer.app.jobs.driver import WorkerDriver

    for key, value in ssh_server.environ().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv(python_env.WORKER_ENV, ssh_server.url)
    monkeypatch.setenv("PT2V_REMOTE_FOLDER_CAP_MB", "0")  # every folder is past the cap
    asked: list[str] = []

    def answer(_parent, _title, text):  # type: ignore[no-untyped-def]
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    owner = QWidget()
    qtbot.addWidget(owner)
    owner.interactive = True  # type: ignore[attr-defined]  (the question is answered by the patch above)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "hello.py").write_text("print('hello from', __file__)\n")
    (tmp_path / "project" / "data.txt").write_text("beside it\n")
    driver = WorkerDriver(owner)
    with qtbot.waitSignal(driver.finished, timeout=PROBE_TIMEOUT) as blocker:
        driver.start("export_script", {"script": str(tmp_path / "project" / "hello.py")}, tmp_path / "out")
    assert len(asked) == 1 and "holds more than 0 MB" in asked[0]
    outcome = blocker.args[0]
    assert outcome.ok, outcome.message
    # the script ran on the server beside its folder; the path it printed reads as the local one
    assert f"hello from {tmp_path / 'project' / 'hello.py'}" in driver.job.stdout_lines  # type: ignore[union-attr]
