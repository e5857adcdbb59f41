"""A job that takes its typed request and returns its typed result; JSON only at the process boundary.

A job module writes `def run(request: XRequest, out: Path, emit) -> XResult` and exposes it to the worker as
`run_job = TypedJob(run, X)`, X its `JobKind` (core/jobs/kinds.py: the request and result types are the kind's, and
the type checker holds `run` to them). The worker (core/worker/__main__.py) reads the request through the kind's
schema and calls `run_job.typed` with it, then writes the returned result's `to_json()` to result.json. Calling
`run_job(request_dict, out, emit)` does the same reading and writing in this process (the tests do, to stay fast):
the dict is read through the schema and the result comes back as its JSON.

`reporting(body, request, out, emit, result)` runs a job body that fills in `result` as it learns, and
`failed(XResult, failure, **learned)` makes a failed result: either way a failed result carries only what the job
learned before failing, as the JSON has always had it (`{"ok": false, "error": ..., "log": ...}`): a field still None
is left out, not written as null.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.jobs.kinds import JobKind
from pt2_viewer.core.jobs.schemas.base import Schema
from pt2_viewer.core.jobs.schemas.failure import Failure, JobResult

Req = TypeVar("Req", bound=Schema)
Res = TypeVar("Res", bound=Schema)
Emit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class TypedJob(Generic[Req, Res]):
    """A job's typed body and its kind; called with a dict, it is the job at the process boundary."""

    typed: Callable[[Req, Path, Emit], Res]
    kind: JobKind[Req, Res]

    def __call__(self, request: dict[str, Any], out: Path, emit: Emit) -> dict[str, Any]:
        """The result's JSON as the job hands it to the worker, which writes it through the schema (adding
        `"version"`)."""
        result = self.typed(self.kind.request.from_json(request), Path(out), emit).to_json()
        result.pop("version", None)
        return result


Out = TypeVar("Out", bound=JobResult)  # every job result has `ok` and `error` (core/jobs/schemas/failure.py)


def reporting(body: Callable[[Req, Path, Emit, Out], None], request: Req, out: Path, emit: Emit, result: Out,
              finished_only: tuple[str, ...] = ()) -> Out:
    """Run a job's body, which fills in `result` as it learns: `ok` when it returns; a `JobFailure` becomes a
    `job_failed` event and the failed `result`, keeping what it learned before (the job does not crash), but not the
    `finished_only` fields (written by a job that finished)."""
    try:
        body(request, Path(out), emit, result)
    except JobFailure as f:
        emit({"type": "job_failed", **f.failure.to_json()})
        result.ok, result.error = False, f.failure
        _learned_only(result, finished_only)
    else:
        result.ok = True
    return result


def failed(result_type: type[Out], failure: Failure, **learned: Any) -> Out:
    """A failed result of `result_type`: `ok` false, the `error`, and only the fields in `learned`."""
    result = result_type(ok=False, error=failure, **learned)
    _learned_only(result)
    return result


def _learned_only(result: Schema, finished_only: tuple[str, ...] = ()) -> None:
    """Write only the fields the job set (None: not learned), not a field that is always written (`"x": null`)."""
    skip = ("extra", "key_order", *finished_only)
    result.key_order = [f.name for f in dataclasses.fields(result)
                        if f.name not in skip and getattr(result, f.name) is not None]


__all__ = ["Emit", "TypedJob", "failed", "reporting"]
