"""Test connection: what a remote worker has (torch, CUDA devices and their free memory, the machine's memory, the
size of its cache), from the agent's `probe` answer. A GUI runs `probe_argv` in a QProcess and hands the exit
status and output to `parse_remote_probe`; `probe_remote` does the same blocking, for the command line and tests.
`cuda` says whether CUDA Run and the Numerics `cuda` candidate can be offered for this worker, and if not, why.
`empty_cache` removes the server's cached code and files.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

from pt2_viewer.core.jobs.remote.ssh import RemoteError, SshCommand, failure
from pt2_viewer.core.jobs.remote.target import RemoteWorker

PROBE_TIMEOUT_S = 120.0


@dataclass
class CudaDevice:
    name: str
    free: int | None = None  # bytes
    total: int | None = None


@dataclass
class RemoteProbe:
    """The server's answer; `error` is one sentence when there was none (or torch is missing there)."""

    url: str
    ok: bool = False
    host: str | None = None
    python_version: str | None = None
    torch_version: str | None = None
    torch_cuda: str | None = None
    cuda_devices: list[CudaDevice] = field(default_factory=list)
    memory_total: int | None = None
    memory_available: int | None = None
    cache_bytes: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RemoteProbe:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "cuda_devices"}
        devices = [CudaDevice(str(d.get("name", "")), d.get("free"), d.get("total"))
                   for d in data.get("cuda_devices") or [] if isinstance(d, dict)]
        return cls(**known, cuda_devices=devices)

    def cuda(self) -> tuple[bool, str]:
        """Whether torch on the server sees a CUDA device; the reason when not."""
        if not self.ok:
            return False, self.error or "the server did not answer"
        if self.cuda_devices:
            return True, ""
        if not self.torch_cuda:
            return False, f"torch on {self.host or 'the server'} is a CPU-only build"
        return False, f"torch on {self.host or 'the server'} sees no CUDA device"

    def summary_lines(self) -> list[str]:
        if not self.ok:
            return [self.error or "The server did not answer."]
        gib = 2**30
        lines = [f"{self.host}: Python {self.python_version}, torch {self.torch_version}"]
        if self.cuda_devices:
            for i, d in enumerate(self.cuda_devices):
                free = f", {d.free / gib:,.1f} of {d.total / gib:,.1f} GB free" if d.free and d.total else ""
                lines.append(f"cuda:{i} {d.name}{free}")
        else:
            lines.append(self.cuda()[1])
        if self.memory_total:
            lines.append(f"memory: {(self.memory_available or 0) / gib:,.1f} of {self.memory_total / gib:,.1f} GB "
                         "free")
        if self.cache_bytes is not None:
            lines.append(f"cache on the server: {self.cache_bytes / 2**20:,.1f} MB")
        return lines


def probe_argv(target: RemoteWorker) -> list[str]:
    return SshCommand.for_target(target).argv("probe", target.scratch)


def parse_remote_probe(target: RemoteWorker, returncode: int, stdout: str, stderr: str) -> RemoteProbe:
    problem = failure(target, returncode, stderr)
    if problem is not None:
        return RemoteProbe(target.url, error=problem.message)
    data = None
    for line in reversed(stdout.splitlines()):
        try:
            data = json.loads(line)
            break
        except ValueError:
            continue
    if not isinstance(data, dict):
        last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
        return RemoteProbe(target.url, error=f"{target.python} on {target.destination} did not answer as a Python 3 "
                           f"would{': ' + last.strip() if last else ''}.")
    memory = data.get("memory") or {}
    probe = RemoteProbe.from_json({**data, "url": target.url, "memory_total": memory.get("total"),
                                   "memory_available": memory.get("available"),
                                   "cache_bytes": data.get("scratch_bytes")})
    if data.get("torch_error"):
        probe.error = (f"{target.python} on {target.destination} has no torch ({data['torch_error']}): choose the "
                       "server's Python that has it.")
    else:
        probe.ok = probe.torch_version is not None
    return probe


def probe_remote(target: RemoteWorker, timeout_s: float = PROBE_TIMEOUT_S) -> RemoteProbe:
    """Ask the server (blocking: it imports torch there). Never raises."""
    try:
        done = subprocess.run(probe_argv(target), capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return RemoteProbe(target.url, error=f"{target.destination} did not answer: {e}.")
    return parse_remote_probe(target, done.returncode, done.stdout, done.stderr)


def empty_cache(target: RemoteWorker) -> None:
    """Remove the server's cached worker code and files (RemoteError when it cannot be reached)."""
    SshCommand.for_target(target).run("empty", target.scratch, timeout_s=120)


__all__ = ["CudaDevice", "RemoteError", "RemoteProbe", "empty_cache", "parse_remote_probe", "probe_argv",
           "probe_remote"]
