"""The ssh command line for a remote worker: the user's own OpenSSH, never prompting, one shared connection.

- `PT2V_SSH_COMMAND` replaces `ssh` and its options, as `GIT_SSH_COMMAND` does for git (`ssh -F ~/work/ssh_config`);
  keys, the agent, `~/.ssh/config` and ProxyJump work as they do in the user's terminal.
- `BatchMode=yes` always: an unknown host key or a key's passphrase fails at once, and the message says to run
  `ssh HOST` once in a terminal, instead of a prompt nobody sees.
- A ControlMaster/ControlPath of the app's own (`/tmp/pt2v-ssh-UID/%C`, kept 5 minutes after the last job) unless
  the user's configuration sets them (`ssh -G` says), so that jobs share one connection: a warm job starts in
  milliseconds instead of a new login.

Every command runs the agent (core/jobs/remote/agent.py) sent inline, compressed, as `PYTHON -c ...`: nothing needs
installing on the server but a Python with torch.
"""
from __future__ import annotations

import base64
import os
import shlex
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pt2_viewer.core.jobs.remote.target import RemoteWorker

SSH_COMMAND_ENV = "PT2V_SSH_COMMAND"
CONTROL_PERSIST_S = 300
CONNECT_TIMEOUT_S = 20
SSH_FAILED = 255  # ssh's own exit status when the connection (not the remote command) failed


class RemoteError(Exception):
    """A remote worker could not be used; the message is a sentence for the user. `retry` when trying again may
    work (the connection dropped), not when something must be set up first (a host key, a key's passphrase)."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry


@cache
def agent_boot() -> str:
    """The `-c` program that runs the agent: its source, compressed and base64'd (no quote or space in it)."""
    source = (Path(__file__).with_name("agent.py")).read_bytes()
    packed = base64.b64encode(zlib.compress(source, 9)).decode("ascii")
    return ('import base64,zlib;exec(compile(zlib.decompress(base64.b64decode("' + packed + '")),"pt2v-agent","exec"))')


def control_dir() -> Path:
    """Where the app's ControlPath sockets live: short (a socket path is limited to ~100 bytes), private."""
    path = Path(tempfile.gettempdir()) / f"pt2v-ssh-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


@cache
def _user_sets_control(base: tuple[str, ...], destination: str, port: int | None) -> bool:
    """Whether the user's ssh configuration (or PT2V_SSH_COMMAND's options) sets ControlMaster or ControlPath."""
    cmd = list(base) + (["-p", str(port)] if port else []) + ["-G", destination]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    settings = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    return settings.get("controlmaster", "false") != "false" or settings.get("controlpath", "none") != "none"


@dataclass(frozen=True)
class SshCommand:
    """How to run one agent command on the server."""

    target: RemoteWorker
    base: tuple[str, ...]  # the ssh program and the user's options (PT2V_SSH_COMMAND)

    @classmethod
    def for_target(cls, target: RemoteWorker, environ: dict[str, str] | None = None) -> SshCommand:
        env = os.environ if environ is None else environ
        base = tuple(shlex.split(env.get(SSH_COMMAND_ENV, "").strip() or "ssh"))
        return cls(target, base)

    def options(self) -> list[str]:
        opts = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-o", "ServerAliveInterval=15",
                "-o", "ServerAliveCountMax=4"]
        if not _user_sets_control(self.base, self.target.destination, self.target.port):
            opts += ["-o", "ControlMaster=auto", "-o", f"ControlPath={control_dir()}/%C",
                     "-o", f"ControlPersist={CONTROL_PERSIST_S}"]
        if self.target.port:
            opts += ["-p", str(self.target.port)]
        return opts

    def argv(self, *agent_args: str) -> list[str]:
        """`ssh OPTIONS DEST 'exec PYTHON -c BOOT ARGS...'`: the remote shell gets one quoted command line."""
        remote = " ".join(shlex.quote(a) for a in (self.target.python, "-c", agent_boot(), *agent_args))
        return [*self.base, *self.options(), "-T", "-e", "none", self.target.destination, "exec " + remote]

    def run(self, *agent_args: str, data: bytes | None = None, timeout_s: float = 120.0
            ) -> subprocess.CompletedProcess[bytes]:
        """Run an agent command to its end; RemoteError when ssh or the agent could not run."""
        try:
            done = subprocess.run(self.argv(*agent_args), input=data, capture_output=True, timeout=timeout_s,
                                  stdin=None if data is not None else subprocess.DEVNULL, check=False)
        except FileNotFoundError:
            raise RemoteError(f"There is no '{self.base[0]}' program here: install OpenSSH's client, or set "
                              f"{SSH_COMMAND_ENV} to the ssh command to use.") from None
        except subprocess.TimeoutExpired:
            raise RemoteError(f"{self.target.destination} did not answer within {timeout_s:g} s.", retry=True) from None
        problem = failure(self.target, done.returncode, done.stderr.decode("utf-8", "replace"))
        if problem is not None:
            raise problem
        return done

    def close_master(self) -> None:
        """End the app's shared connection to this server now (the tests do). Otherwise it ends by itself
        `ControlPersist` seconds after its last job, as any ssh master with that option does."""
        subprocess.run([*self.base, *self.options(), "-O", "exit", self.target.destination], capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=10, check=False)


HOST_KEY_SIGNS = ("host key verification failed", "host key is known", "remote host identification has changed",
                  "no matching host key")
LOGIN_SIGNS = ("permission denied", "too many authentication failures", "passphrase")
UNREACHABLE_SIGNS = ("could not resolve hostname", "connection refused", "no route to host", "connection timed out",
                     "network is unreachable", "operation timed out")


def _last_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def failure(target: RemoteWorker, returncode: int, stderr: str) -> RemoteError | None:
    """What went wrong, in words, when ssh or the remote Python failed; None when the command ran."""
    text = stderr.lower()
    dest = target.destination
    once = f"Run `ssh {dest}` once in a terminal" + (f" (with -p {target.port})" if target.port else "")
    if returncode == SSH_FAILED or any(s in text for s in HOST_KEY_SIGNS + LOGIN_SIGNS):
        if any(s in text for s in HOST_KEY_SIGNS):
            return RemoteError(f"ssh does not know the host key of {dest} yet (or it changed), and does not ask "
                               f"here. {once}, check and accept the key, then try again.")
        if any(s in text for s in LOGIN_SIGNS):
            return RemoteError(f"ssh could not log in to {dest} without asking for a password or a passphrase. "
                               f"{once} (and `ssh-add` your key to the agent), then try again.")
        if any(s in text for s in UNREACHABLE_SIGNS):
            return RemoteError(f"Cannot reach {dest}: {_last_line(stderr)}.", retry=True)
        if returncode == SSH_FAILED:
            return RemoteError(f"The connection to {dest} failed or was lost: {_last_line(stderr) or 'no reason given'}"
                               ". Try again.", retry=True)
    if returncode == 127 or (returncode != 0 and "no such file or directory" in text and target.python in stderr):
        return RemoteError(f"There is no Python at {target.python} on {dest}. Choose the server's Python that has "
                           "torch (e.g. a venv's bin/python).")
    if returncode == 126:
        return RemoteError(f"{target.python} on {dest} cannot be run (not an executable).")
    return None
