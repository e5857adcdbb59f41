"""A second launch hands its files to the running instance over a per-user local socket
(app/platform/single_instance.py).

The running side is a SingleInstance in this test process (pytest-qt's event loop); the second launch is a real
child process, exactly as a double-click would start one.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from pt2_viewer.app.platform.single_instance import SingleInstance, default_server_name

ROOT = Path(__file__).resolve().parents[3]

# What app/main.py does on a second launch: offer the files, exit 0 if taken, 3 if it must open its own window.
SECOND_LAUNCH = """
import sys
from pt2_viewer.app.platform.single_instance import SingleInstance
taken = SingleInstance(sys.argv[1]).try_hand_off(sys.argv[2:], timeout_ms=5000)
sys.exit(0 if taken else 3)
"""


@pytest.fixture
def server_name():
    name = f"pt2v-test-{uuid.uuid4().hex[:12]}"
    yield name
    QLocalServer.removeServer(name)


def start_second_launch(name: str, files: list[str], cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", SECOND_LAUNCH, name, *files], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_second_process_hands_its_files_to_the_running_instance(qtbot, server_name, tmp_path):
    first = SingleInstance(server_name)
    assert first.listen()
    (tmp_path / "a model.pt2").write_bytes(b"PK")
    with qtbot.waitSignal(first.files_received, timeout=15000) as received:
        second = start_second_launch(server_name, ["a model.pt2", "/abs/other.pt2"], cwd=tmp_path)
    out, _ = second.communicate(timeout=30)
    assert second.returncode == 0, out
    # Relative paths are resolved in the second launch's folder, not the running window's.
    assert received.args == [[str(tmp_path / "a model.pt2"), "/abs/other.pt2"]]
    first.close()


def test_second_launch_without_files_still_reaches_the_window(qtbot, server_name, tmp_path):
    first = SingleInstance(server_name)
    assert first.listen()
    with qtbot.waitSignal(first.files_received, timeout=15000) as received:
        second = start_second_launch(server_name, [], cwd=tmp_path)
    second.communicate(timeout=30)
    assert second.returncode == 0
    assert received.args == [[]]


def test_no_running_instance_means_no_hand_off(qapp, server_name):
    assert SingleInstance(server_name).try_hand_off(["x.pt2"], timeout_ms=300) is False


def test_after_close_a_new_launch_opens_its_own_window(qtbot, server_name, tmp_path):
    first = SingleInstance(server_name)
    assert first.listen()
    first.close()
    second = start_second_launch(server_name, ["x.pt2"], cwd=tmp_path)
    out, _ = second.communicate(timeout=30)
    assert second.returncode == 3, out


def test_only_one_instance_can_listen(qapp, server_name):
    first = SingleInstance(server_name)
    assert first.listen()
    second = SingleInstance(server_name)
    assert second.listen() is False
    assert first.is_listening() and not second.is_listening()
    first.close()
    assert second.listen() is True
    second.close()


def test_a_socket_left_by_a_crashed_instance_is_taken_over(qtbot, tmp_path):
    # A crash leaves the socket file behind: nothing accepts on it, so the next launch reclaims the name.
    name = str(tmp_path / "stale.sock")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(name)
    dead.close()
    assert Path(name).is_socket()
    instance = SingleInstance(name)
    assert instance.listen()
    with qtbot.waitSignal(instance.files_received, timeout=15000) as received:
        second = start_second_launch(name, ["/data/m.pt2"], cwd=tmp_path)
    second.communicate(timeout=30)
    assert received.args == [["/data/m.pt2"]]
    instance.close()


def test_malformed_request_is_refused_and_nothing_is_emitted(qtbot, server_name):
    first = SingleInstance(server_name)
    assert first.listen()
    emitted: list[list[str]] = []
    first.files_received.connect(emitted.append)
    client = QLocalSocket()
    client.connectToServer(server_name)
    assert client.waitForConnected(1000)
    client.write(b'{"files": "not a list"}\n')
    answer = bytearray()

    def answered() -> None:
        answer.extend(bytes(client.readAll().data()))
        assert answer.endswith(b"\n")

    qtbot.waitUntil(answered, timeout=5000)
    assert answer.startswith(b"error:"), answer
    assert emitted == []
    first.close()


def test_default_name_is_per_user(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert default_server_name() == str(tmp_path / "pt2-viewer.sock")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert default_server_name() == f"pt2-viewer-{os.getuid()}"
