"""Which server runs the jobs: `ssh://[user@]host[:port]/ABSOLUTE/PATH/TO/python`, parsed into a `RemoteWorker`.

The URL is what `--worker` and `PT2V_WORKER` take and what Preferences stores. The scratch folder (the server's cache
of worker code, copied files and job folders) is not part of the URL: Preferences sets it, or `PT2V_WORKER_SCRATCH`,
else `~/.cache/pt2-viewer-worker` on the server.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SCHEME = "ssh://"
SCRATCH_ENV = "PT2V_WORKER_SCRATCH"
DEFAULT_SCRATCH = "~/.cache/pt2-viewer-worker"


class WorkerUrlError(ValueError):
    """A worker URL that cannot be used; the message says what is wrong and what is expected."""


@dataclass(frozen=True)
class RemoteWorker:
    """A Python on another machine, reached with the system's ssh."""

    host: str
    python: str
    user: str | None = None
    port: int | None = None
    scratch: str = DEFAULT_SCRATCH

    @property
    def destination(self) -> str:
        """What ssh is given: `user@host` or `host` (the port goes as -p)."""
        return f"{self.user}@{self.host}" if self.user else self.host

    @property
    def url(self) -> str:
        port = f":{self.port}" if self.port else ""
        return f"{SCHEME}{self.destination}{port}{self.python}"

    def describe(self) -> str:
        return f"{self.python} on {self.destination}" + (f" (port {self.port})" if self.port else "")


def is_remote(text: str | None) -> bool:
    return bool(text) and str(text).strip().startswith(SCHEME)


def parse_worker_url(text: str, scratch: str | None = None) -> RemoteWorker:
    """`ssh://[user@]host[:port]/ABS/PATH/python` -> RemoteWorker; WorkerUrlError with the reason otherwise."""
    text = text.strip()
    expected = "expected ssh://[user@]host[:port]/ABSOLUTE/PATH/TO/python"
    if not text.startswith(SCHEME):
        raise WorkerUrlError(f"'{text}' is not an SSH worker: {expected}")
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        raise WorkerUrlError(f"'{text}' has a port that is not a number: {expected}") from None
    host = parts.hostname
    python = unquote(parts.path)
    if not host:
        raise WorkerUrlError(f"'{text}' names no host: {expected}")
    if not python.startswith("/") or python == "/":
        raise WorkerUrlError(f"'{text}' names no absolute path to the server's Python: {expected}")
    if parts.query or parts.fragment:
        raise WorkerUrlError(f"'{text}' has a '?' or '#' part, which a worker URL does not take: {expected}")
    chosen = scratch or os.environ.get(SCRATCH_ENV, "").strip() or DEFAULT_SCRATCH
    return RemoteWorker(host=host, python=python, user=unquote(parts.username) if parts.username else None,
                        port=port, scratch=chosen)
