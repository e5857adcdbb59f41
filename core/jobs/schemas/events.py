"""The events a worker sends on its events pipe (core/jobs/protocol.py, docs/worker.md), one JSON object per line.

The channel is untrusted input (a script or a decomposition table runs in the worker and can write to it), so each
event the client acts on has its schema here, and `protocol.decode_event` checks a line against it: a line that does
not fit becomes a `garbled` event. Events not listed (a job's own, such as `export_finished`) pass as they are."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.jobs.schemas.base import Schema, SchemaError, items, optional
from pt2_viewer.core.jobs.schemas.failure import Failure

RESULT_FILE = "result.json"  # what a done event names: the result, in the job's folder (protocol.py re-exports it)


@dataclass
class Event(Schema):
    """Every event has a `type`; a warm worker's job events also carry `job_id`."""

    type: str
    job_id: int | None = optional()


@dataclass
class Started(Event):
    KIND = "started event"

    job: str | None = optional()
    pid: int | None = optional()
    warm: bool | None = optional()


@dataclass
class Progress(Event):
    KIND = "progress event"

    stage: str | None = optional()
    message: str | None = optional()
    fraction: float | None = optional()  # 0..1

    def __post_init__(self) -> None:
        if self.fraction is not None and not 0.0 <= self.fraction <= 1.0:
            raise SchemaError(f"progress event: fraction {self.fraction} is not between 0 and 1")


@dataclass
class Done(Event):
    KIND = "done event"

    result: str | None = optional()  # always "result.json", in the job's folder: never a path the channel names

    def __post_init__(self) -> None:
        if self.result is not None and self.result != RESULT_FILE:
            raise SchemaError(f"done event: the result is {RESULT_FILE}, not {self.result!r}")


@dataclass
class Error(Event):
    KIND = "error event"

    message: str | None = optional()
    traceback: str | None = optional()


@dataclass
class JobFailed(Event):
    """A job that could not do what was asked, as it says so before returning its failed result (`Failure`'s
    fields)."""

    KIND = "job_failed event"

    kind: str = ""
    message: str = ""
    hint: str = ""
    detail: str = ""
    consent: list[str] = items()
    modules: list[str] = items()

    def failure(self) -> Failure:
        return Failure(self.kind, self.message, self.hint, self.detail, list(self.consent), list(self.modules))


@dataclass
class Ready(Event):
    KIND = "ready event"

    pid: int | None = optional()


EVENTS: dict[str, type[Event]] = {"started": Started, "progress": Progress, "done": Done, "error": Error,
                                  "job_failed": JobFailed, "ready": Ready}

__all__ = ["Done", "EVENTS", "Error", "Event", "JobFailed", "Progress", "Ready", "Started"]
