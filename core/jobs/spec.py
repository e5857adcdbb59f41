"""What a job is asked to do and under which limits: the one value every kind of job is made from.

A one-shot worker (`client.WorkerJob`), a job in a program's warm worker (`warm.WarmJob`) and a job on another
machine (`remote.job.RemoteJob`) all take a `JobSpec`, so the options a job takes are written once, here, and a
caller that picks the kind of job (`WarmPool.job`, `worker_job`) passes the spec on as it came. A kind of job that
has no use for an option (a warm worker's `python` is its key's) ignores it there, in one line that says why.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.outcome import JobOutcome

DEFAULT_TIMEOUT_S = 3600.0  # a job with no limit given stops after an hour (timeout_s=0: no limit)


@dataclass
class JobSpec:
    """A job to run: its name, request and folder, the worker's limits and environment, and who hears from it."""

    job: str  # the job's name (core/worker/__main__.py JOBS)
    request: dict[str, Any]  # the request as request.json holds it (a schema's `to_json()`)
    out_dir: str | os.PathLike[str]  # where request.json and result.json go (resolved: `folder`)
    timeout_s: float | None = None  # None: the default (an hour); 0: none
    memory_limit_mb: int | None = None  # the worker's address-space limit and its tree's cap; None: default, 0: none
    python: str | None = None  # the worker's Python (None: PT2V_WORKER_PYTHON, Preferences, this one)
    env: dict[str, str] = field(default_factory=dict)  # added to the worker's environment
    cwd: str | None = None  # the worker's working folder
    on_event: Callable[[dict[str, Any]], None] | None = None
    on_output: Callable[[str, str], None] | None = None  # (stream name, line)
    on_finished: Callable[[JobOutcome], None] | None = None

    @property
    def folder(self) -> Path:
        return Path(self.out_dir).resolve()

    @property
    def time_limit_s(self) -> float | None:
        """The time limit in force: the default for None, none for 0."""
        return DEFAULT_TIMEOUT_S if self.timeout_s is None else (self.timeout_s or None)


__all__ = ["DEFAULT_TIMEOUT_S", "JobSpec"]
