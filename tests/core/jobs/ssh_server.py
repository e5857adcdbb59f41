"""A real OpenSSH server on 127.0.0.1 for the SSH worker's tests, and a "server" Python in a folder of its own.

`ssh_server` (session-scoped) starts `/usr/sbin/sshd -D` on a free port with a throwaway host key, logging in as the
current user with a throwaway user key (its own AuthorizedKeysFile; root may log in by key only). The client side is
an ssh config file of its own (`Host pt2v-test`, the host key already known), given to the app the way a user
would: `PT2V_SSH_COMMAND="ssh -F CONFIG"`. The server's Python is a venv made from the project's Python whose
site-packages reach the project's (torch and all), so its `sys.executable` is its own: the tests can tell which
Python ran a job.
"""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD = "/usr/sbin/sshd"
HOST_ALIAS = "pt2v-test"


@dataclass
class SshServer:
    root: Path
    port: int
    config: Path  # the client's ssh config
    python: str  # the "server" Python
    scratch: Path
    process: subprocess.Popen[bytes]

    @property
    def ssh_command(self) -> str:
        return f"ssh -F {self.config}"

    @property
    def url(self) -> str:
        return f"ssh://{HOST_ALIAS}{self.python}"

    def environ(self) -> dict[str, str]:
        """What a user sets to use this server (PT2V_WORKER_SCRATCH keeps the cache inside the test's folder)."""
        return {"PT2V_SSH_COMMAND": self.ssh_command, "PT2V_WORKER_SCRATCH": str(self.scratch)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the sshd child: SIGTERM when the test process ends, even killed (a timeout), so no sshd outlives it."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 15)


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True,
                   stdin=subprocess.DEVNULL)


def make_server_python(folder: Path) -> str:
    """A venv of the project's Python in `folder`, seeing the project's site-packages (a .pth calling addsitedir)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = folder / "lib" / version / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    project_site = sysconfig.get_paths()["purelib"]
    (site / "pt2v_test_server.pth").write_text(f"import site; site.addsitedir({project_site!r})\n")
    return str(folder / "bin" / "python")


def start_sshd(root: Path) -> SshServer:
    if not (os.path.exists(SSHD) and shutil.which("ssh")):
        pytest.skip("OpenSSH's server and client are not installed (scripts/setup.sh installs them)")
    root.mkdir(parents=True, exist_ok=True)
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation folder (Debian's sshd checks for it)
    _keygen(root / "host_key")
    _keygen(root / "id_user")
    (root / "authorized_keys").write_text((root / "id_user.pub").read_text())
    os.chmod(root / "authorized_keys", 0o600)
    port = _free_port()
    (root / "sshd_config").write_text(f"""\
Port {port}
ListenAddress 127.0.0.1
HostKey {root}/host_key
PidFile {root}/sshd.pid
AuthorizedKeysFile {root}/authorized_keys
PermitRootLogin prohibit-password
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PrintMotd no
LogLevel ERROR
""")
    host_pub = (root / "host_key.pub").read_text().split()
    (root / "known_hosts").write_text(f"{HOST_ALIAS} {host_pub[0]} {host_pub[1]}\n")
    config = root / "ssh_config"
    config.write_text(f"""\
Host {HOST_ALIAS}
  HostName 127.0.0.1
  Port {port}
  User {pwd.getpwuid(os.getuid()).pw_name}
  IdentityFile {root}/id_user
  IdentitiesOnly yes
  HostKeyAlias {HOST_ALIAS}
  UserKnownHostsFile {root}/known_hosts
  StrictHostKeyChecking yes
  LogLevel ERROR
""")
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(root / "sshd_config")], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=open(root / "sshd.log", "wb"),  # noqa: SIM115
                               preexec_fn=_die_with_parent)
    deadline = time.monotonic() + 20
    while True:  # sshd listens within milliseconds; this is no sleep in a test, it waits for a socket
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not start: {(root / 'sshd.log').read_text()}") from None
            time.sleep(0.05)
    python = make_server_python(root / "server")
    scratch = root / "scratch"
    return SshServer(root, port, config, python, scratch, process)


def stop_sshd(server: SshServer) -> None:
    from pt2_viewer.core.jobs.remote.ssh import SshCommand
    from pt2_viewer.core.jobs.remote.target import parse_worker_url

    SshCommand.for_target(parse_worker_url(server.url), server.environ()).close_master()
    server.process.terminate()
    try:
        server.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    stop_sshd(server)


@pytest.fixture
def use_ssh_server(ssh_server: SshServer, monkeypatch: pytest.MonkeyPatch) -> SshServer:
    """The app pointed at the test server, as a user would with environment variables; a local worker Python that
    does not exist, so a job that ran here instead would fail."""
    for key, value in ssh_server.environ().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PT2V_WORKER_PYTHON", "/nonexistent/local/python")
    return ssh_server
