"""What a job is asked to do and under which limits: the one value every kind of job is made from.

A one-shot worker (`client.WorkerJob`), a job in a program's warm worker (`warm.WarmJob`) and a job on another
machine (`remote.job.RemoteJob`) all take a `JobSpec`, so the options a job takes are written once, here, and a
caller that picks the kind of job (`WarmPool.job`, `worker_job`) passes the spec on as it came. A kind of job that
has no use for an option (a warm worker's `python` is its key's) ignores it there, in one line that says why.

The request is the job's typed request, of the type its kind says (core/jobs/kinds.py), checked here; whoever runs
the job reads its fields (the warm pool its program, the window's driver its trust) and writes its JSON only where it
leaves this process: request.json for the worker, the SSH server's copy, the warm worker's job line.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.kinds import JobKind, job_kind
from pt2_viewer.core.jobs.outcome import JobOutcome
from pt2_viewer.core.jobs.schemas.base import Schema

DEFAULT_TIMEOUT_S = 3600.0  # a job with no limit given stops after an hour (timeout_s=0: no limit)


@dataclass
class JobSpec:
    """A job to run: its name, request and folder, the worker's limits and environment, and who hears from it."""

    job: str  # the job's name: a kind of core/jobs/kinds.py
    request: Schema  # the job's typed request (its kind's `request`); JSON given here is read through it
    out_dir: str | os.PathLike[str]  # where request.json and result.json go (resolved: `folder`)
    timeout_s: float | None = None  # None: the default (an hour); 0: none
    memory_limit_mb: int | None = None  # the worker's address-space limit and its tree's cap; None: default, 0: none
    python: str | None = None  # the worker's Python (None: PT2V_WORKER_PYTHON, Preferences, this one)
    env: dict[str, str] = field(default_factory=dict)  # added to the worker's environment
    cwd: str | None = None  # the worker's working folder
    on_event: Callable[[dict[str, Any]], None] | None = None
    on_output: Callable[[str, str], None] | None = None  # (stream name, line)
    on_finished: Callable[[JobOutcome], None] | None = None

    def __post_init__(self) -> None:
        """The request checked against the job's kind: `UnknownJob` for a name no kind has, `SchemaError` for JSON
        that does not read as its request, `TypeError` for a request of another type."""
        self.request = kind_request(job_kind(self.job), self.request)

    @property
    def kind(self) -> JobKind[Any, Any]:
        return job_kind(self.job)

    @property
    def folder(self) -> Path:
        return Path(self.out_dir).resolve()

    @property
    def time_limit_s(self) -> float | None:
        """The time limit in force: the default for None, none for 0."""
        return DEFAULT_TIMEOUT_S if self.timeout_s is None else (self.timeout_s or None)


def kind_request(kind: JobKind[Any, Any], request: Schema | Mapping[str, Any]) -> Schema:
    """`request` as `kind`'s request type: JSON (the tests', a script's own) read through it, a request of that type
    as it is, and one of a type it extends (a `RunRequest` for `run_pte`, whose `ArtifactRunRequest` adds `source`,
    `method` and `etrecord`) read as one with those fields unset. Any other type is a caller's mistake: TypeError."""
    wanted = kind.request
    if isinstance(request, Mapping):
        return wanted.from_json(request)
    if isinstance(request, wanted):
        return request
    if isinstance(request, Schema) and issubclass(wanted, type(request)):
        return wanted.from_json(request.to_json())
    raise TypeError(f"the job '{kind.name}' takes a {wanted.__name__}, not a {type(request).__name__}")


__all__ = ["DEFAULT_TIMEOUT_S", "JobSpec", "kind_request"]
