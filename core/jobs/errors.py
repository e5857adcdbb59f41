"""The failure a decompose or run job reports instead of crashing.

A job that cannot do what was asked (the program does not load, a decomposition raises, an input breaks a shape
constraint, CUDA is missing) raises `JobFailure`. The job's `reporting` (core/jobs/typed_job.py) turns it into the
`error` part of its result, so the GUI and the command lines show one message that names the problem and says what to
do, and scripts read a stable `kind`.
"""
from __future__ import annotations

from typing import Any

from pt2_viewer.core.jobs.schemas.failure import Failure


class JobFailure(Exception):
    """Raised inside a job; the job reports `failure` in its result instead of crashing."""

    def __init__(self, kind: str, message: str, hint: str = "", detail: str = "",
                 consent: list[str] | None = None, modules: list[str] | None = None) -> None:
        super().__init__(message)
        self.failure = Failure(kind=kind, message=message, hint=hint, detail=detail, consent=list(consent or []),
                               modules=list(modules or []))


def first_line(exc: BaseException, limit: int = 400) -> str:
    """The first line of an exception's text, shortened: torch messages can run to pages."""
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failed_result(failure: Failure, **extra: object) -> dict[str, Any]:
    """The result dict of a job that failed: `ok` false, the `error`, and whatever was learned before it failed."""
    return {"ok": False, "error": failure.to_json(), **extra}
