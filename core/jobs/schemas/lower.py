"""The lower job's request and result (`core/deploy/lower.py`; the JSON is documented in docs/jobs.md, "lower").

The result is what `pt2-viewer lower --json` prints: `pte`, `etrecord`, `backend`, `delegated` and `not_delegated`
exactly (the other fields are for the window and the log)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.jobs.schemas.base import Schema, items, local_path, optional
from pt2_viewer.core.jobs.schemas.failure import JobResult
from pt2_viewer.core.jobs.schemas.run import ProgramRequest

BACKENDS = ("portable", "xnnpack")


@dataclass
class LowerRequest(ProgramRequest):
    KIND = "lower request"
    VERSIONED = True

    to: str = "xnnpack"  # "portable" or "xnnpack"
    output: str | None = local_path()  # where to write the .pte (default OUT/lowered.pte); the ETRecord beside it


@dataclass
class NotDelegated(Schema):
    """A call_function node of the source the partitioner left outside the delegate, in its own words."""

    KIND = "not delegated"

    node: str
    target: str
    reason: str


@dataclass
class LowerResult(JobResult):
    KIND = "lower result"
    VERSIONED = True

    pte: str | None = local_path(omit_none=True)
    etrecord: str | None = local_path(omit_none=True)
    backend: str | None = optional()
    delegated: list[str] | None = optional()  # source call_function nodes wholly inside a delegate
    not_delegated: list[NotDelegated] | None = optional()
    program: str | None = local_path(omit_none=True)
    program_name: str | None = optional()
    source_to_pte: dict[str, list[str]] | None = optional()  # source node -> the .pte nodes computing it (ETRecord)
    checks: list[dict[str, Any]] | None = optional()  # every support check: node, target, config, phase, verdict
    imported: list[str] | None = optional()
    imports: list[dict[str, Any]] | None = optional()
    seconds: dict[str, float] = items(dict)  # load, lower, save
    log: list[str] = items()


__all__ = ["BACKENDS", "LowerRequest", "LowerResult", "NotDelegated"]
