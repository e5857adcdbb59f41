"""The one interface every kind of job keeps, whoever runs it: a one-shot worker process (`client.WorkerJob`), a
job in a program's warm worker (`warm.WarmJob`), or a job on another machine (`remote.job.RemoteJob`).

Whoever drives a job (the window's `WorkerDriver`, the command lines) holds a `Job` and needs no `isinstance`: it
starts it, watches `fds()` and calls `poll()` until that returns False (or calls `wait()`), may `cancel()`, and
reads `outcome` (a `JobOutcome`, the same words for every kind). The callbacks may be set to None to stop hearing
from a job (its owner went away).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pt2_viewer.core.jobs.client import EventCallback, JobOutcome, OutputCallback
from pt2_viewer.core.jobs.schemas.base import Schema


class Job(Protocol):
    job: str  # the job's name: a kind of core/jobs/kinds.py
    request: Schema  # the job's typed request (core/jobs/spec.py)
    out_dir: Path  # where request.json and result.json are
    outcome: JobOutcome | None  # set once it ended
    events: list[dict[str, Any]]
    stdout_lines: list[str]
    stderr_lines: list[str]
    on_event: EventCallback | None
    on_output: OutputCallback | None
    on_finished: Callable[[JobOutcome], None] | None

    @property
    def pid(self) -> int | None: ...

    @property
    def running(self) -> bool: ...

    def start(self) -> None:
        """Start it; never blocks (a failure to start ends it at once, with `on_finished`)."""

    def fds(self) -> list[int]:
        """The file descriptors to watch; call `poll()` when one is readable (and every ~100 ms)."""
        ...

    def poll(self) -> bool:
        """Read what is there, deliver it, enforce the limits, notice the end. True while it runs."""
        ...

    def wait(self) -> JobOutcome:
        """Block until it ends (its limits still apply)."""
        ...

    def cancel(self) -> None:
        """Stop it and everything it started; the outcome says 'cancelled'."""



if TYPE_CHECKING:  # the type checker proves that each kind of job keeps the interface
    from pt2_viewer.core.jobs.client import WorkerJob
    from pt2_viewer.core.jobs.remote.job import RemoteJob
    from pt2_viewer.core.jobs.warm import WarmJob

    def _every_kind(cold: WorkerJob, warm: WarmJob, remote: RemoteJob) -> list[Job]:
        return [cold, warm, remote]


__all__ = ["Job"]
