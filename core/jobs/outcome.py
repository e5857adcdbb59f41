"""How a job ended, in the same words whoever ran it (a one-shot worker, a warm one, one over SSH).

`result` is result.json as the worker wrote it (the JSON at the process boundary); `result_as(XResult)` reads it back
into the job's typed result (core/jobs/schemas/), which is what the window and the command lines read.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.schemas.base import Schema
from pt2_viewer.core.jobs.schemas.failure import Failure

S = TypeVar("S", bound=Schema)


@dataclass
class JobOutcome:
    """How a job ended. `message` is a sentence for the user; `result` is result.json when the job finished."""

    status: str  # protocol.OK, FAILED, CRASHED, CANCELLED, TIMED_OUT, START_FAILED
    message: str
    returncode: int | None = None
    result: dict[str, Any] | None = None
    error: str | None = None  # the job's own error message (`error` event)
    error_traceback: str | None = None
    duration_s: float = 0.0
    out_dir: Path | None = None

    @property
    def ok(self) -> bool:
        return self.status == protocol.OK

    def failure_text(self) -> tuple[str, str] | None:
        """(message, detail) when the job did not do its work: the worker crashed or was stopped, or the job reported
        a failure (`ok` false: its message and hint, `Failure.text`, "the log" said to be below); the detail is torch's
        and the job's log. None when it succeeded. The one way the window says why a job failed."""
        if not self.ok:
            return self.message, self.error_traceback or ""
        failure = Failure.of_result(self.result or {})
        if failure is None:
            return None
        log = (self.result or {}).get("log")  # result.json as it came: any job's, whatever its schema
        lines = [str(x) for x in log] if isinstance(log, list) else []
        detail = "\n".join(p for p in (failure.detail, *lines) if p)
        return failure.text(log="below" if detail else ""), detail  # the window shows the detail under the words

    def result_as(self, schema: type[S]) -> S | None:
        """result.json read back through the job's result schema (core/jobs/schemas/), or None without one."""
        return schema.from_json(self.result) if self.result is not None else None


__all__ = ["JobOutcome"]
