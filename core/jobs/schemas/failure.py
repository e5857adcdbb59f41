"""A failed job's `error` object, as every job's result carries it (docs/jobs.md, "Events and failures"): `kind` for
code, `message` and `hint` for people, `detail` (torch's traceback, log lines) for the log panel. The one definition:
`core/jobs/errors.py` raises it (`JobFailure`), the worker writes it, the window and the command line read it."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.jobs.schemas.base import Schema, SchemaError, items, optional


@dataclass
class Failure(Schema):
    """What went wrong, for people (`message`, `hint`) and for code (`kind`)."""

    KIND = "job failure"

    # "request", "load", "untrusted", "missing_op", "missing_type", "table", "decompose", "input", "constraint",
    # "cuda", "oom", ...; from the command lines also "start_failed", "crashed", "timed_out", "cancelled", "internal"
    kind: str
    message: str  # one or two sentences naming the problem
    hint: str = ""  # what the user can do about it
    detail: str = ""  # the original exception text or log lines, for the log panel
    consent: list[str] = items()  # kind "untrusted": what the user is asked to allow
    modules: list[str] = items()  # kind "untrusted": the modules of `consent` (--allow-import)

    def text(self, log: str = "") -> str:
        """The message and the hint as one paragraph for a terminal or a dialog: the one way a failure is said.
        `log` says where the log the words refer to is ("below" in a window's failure box, "at /tmp/….log" from the
        command line): "The log has torch's full message" becomes "The log below has …"."""
        text = f"{self.message} {self.hint}".strip()
        return saying_where_the_log_is(text, log) if log else text

    @classmethod
    def of_result(cls, result: Mapping[str, Any] | None) -> Failure | None:
        """The failure a job's result.json reports (`ok` false), or None when the job did its work: the JSON read at
        the process boundary (a `JobOutcome`'s `result`) through `JobResult`. An `error` that does not read as one
        is still a failure, said in general words."""
        if result is None:
            return None
        try:
            head = JobResult.from_json(result, "the job's result")
        except SchemaError:
            head = JobResult(ok=False)
        if head.ok:
            return None
        return head.error or cls("unknown", "The job failed.",
                                 "Its result gives no readable reason; the log may say more.")


@dataclass
class JobResult(Schema):
    """What every job's result says first: whether the job did its work (`ok`) and, if not, why (`error`). Each
    job's result schema (decompose, run, numerics, lower) adds what the job learned."""

    KIND = "job result"

    ok: bool
    error: Failure | None = optional()


_THE_LOG = re.compile(r"\b([Tt])he log\b(?!['\w]| (?:above|below|at|panel)\b)")


def saying_where_the_log_is(text: str, where: str) -> str:
    """`text` with each bare "the log" followed by `where` ("below", "at PATH"), so that a user reads where it is."""
    return _THE_LOG.sub(lambda m: f"{m.group(1)}he log {where}", text)


__all__ = ["Failure", "JobResult", "saying_where_the_log_is"]
