"""What a job is asked to do and under which limits: the one value every kind of job is made from.

A one-shot worker (`client.WorkerJob`), a job in a program's warm worker (`warm.WarmJob`) and a job on another
machine (`remote.job.RemoteJob`) all take a `JobSpec`, so the options a job takes are written once, here, and a
caller that picks the kind of job (`WarmPool.job`, `worker_job`) passes the spec on as it came. A kind of job that
has no use for an option (a warm worker's `python` is its key's) ignores it there, in one line that says why.

The request is the job's typed request (a dataclass of core/jobs/schemas/); whoever runs the job reads its fields
(the warm pool its program, the window's driver its trust) and writes its JSON only where it leaves this process:
request.json for the worker, the SSH server's copy, the warm worker's job line.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.outcome import JobOutcome
from pt2_viewer.core.jobs.schemas.base import Schema, SchemaError
from pt2_viewer.core.jobs.schemas.jobs import JOB_SCHEMAS

DEFAULT_TIMEOUT_S = 3600.0  # a job with no limit given stops after an hour (timeout_s=0: no limit)


@dataclass
class JobSpec:
    """A job to run: its name, request and folder, the worker's limits and environment, and who hears from it."""

    job: str  # the job's name (core/worker/__main__.py JOBS)
    request: Schema  # the job's typed request (JOB_SCHEMAS[job].request); JSON given here is read through it
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
        if isinstance(self.request, Mapping):  # a request written as JSON (the tests, a script's own): read it here
            self.request = typed_request(self.job, self.request)

    @property
    def folder(self) -> Path:
        return Path(self.out_dir).resolve()

    @property
    def time_limit_s(self) -> float | None:
        """The time limit in force: the default for None, none for 0."""
        return DEFAULT_TIMEOUT_S if self.timeout_s is None else (self.timeout_s or None)


@dataclass
class JsonRequest(Schema):
    """A request kept as the JSON it came as (every key in `extra`, written back as it came): for a job with no
    schema, or a request that does not read through its job's. The worker's own check is the one that counts: it
    says what is wrong as the job's failure of kind `request`."""

    KIND = "request"


def typed_request(job: str, request: Mapping[str, Any]) -> Schema:
    """`request` (JSON) read through `job`'s request schema: the one place a JobSpec's request is read from JSON."""
    schema = JOB_SCHEMAS.get(job)
    if schema is not None:
        try:
            return schema.request.from_json(request)
        except SchemaError:
            pass  # sent as it is: the worker turns it into a `request` failure, in its own words
    return JsonRequest.from_json(request)


__all__ = ["DEFAULT_TIMEOUT_S", "JobSpec", "JsonRequest", "typed_request"]
