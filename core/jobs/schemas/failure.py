"""A failed job's `error` object, as every job's result carries it (docs/jobs.md, "Events and failures"): `kind` for
code, `message` and `hint` for people, `detail` (torch's traceback, log lines) for the log panel."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.jobs.schemas.base import Schema, items


@dataclass
class FailureInfo(Schema):
    KIND = "job failure"

    kind: str  # "request", "load", "untrusted", "missing_op", "decompose", "input", "constraint", "oom", ...
    message: str  # one or two sentences naming the problem
    hint: str = ""  # what the user can do about it
    detail: str = ""  # the original exception text or log lines
    consent: list[str] = items()  # kind "untrusted": what the user is asked to allow

    def text(self) -> str:
        """The message and the hint as one paragraph for a terminal or a dialog."""
        return f"{self.message} {self.hint}".strip()


__all__ = ["FailureInfo"]
