"""The decompose job's request and result (`core/decompose/job.py`; the JSON is documented in docs/jobs.md).

The result is also what `pt2-viewer decompose --json` prints (without `log`) and what the window's compare view is
opened from.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.jobs.schemas.base import Schema, items, local_path, optional
from pt2_viewer.core.jobs.schemas.failure import JobResult
from pt2_viewer.core.jobs.schemas.run import ProgramRequest


@dataclass
class DecomposeRequest(ProgramRequest):
    KIND = "decompose request"
    VERSIONED = True

    to: str = local_path(default="core")  # "functional", "core", "table", or a .py path (a table file)
    table: str | None = local_path()  # the table .py file, when `to` is "table"
    table_name: str | None = None  # which table of that file, if it holds several
    output: str | None = local_path()  # where to write the decomposed .pt2; default OUT/decomposed.pt2


@dataclass
class OpChange(Schema):
    """One row of the op diff: an op's calls before and after."""

    KIND = "op change"

    op: str  # "aten.conv2d.default"
    before: int
    after: int
    change: int = 0  # after - before (written for readers; recomputed on reading)

    def __post_init__(self) -> None:
        self.change = self.after - self.before


@dataclass
class DecomposeResult(JobResult):
    """What the job returns. A failed job has `ok` false, `error`, and what it learned before failing."""

    KIND = "decompose result"
    VERSIONED = True

    program: str | None = local_path(omit_none=True)
    program_name: str | None = optional()
    target: str | None = optional()  # "functional", "core" or "table"
    table: str | None = local_path()  # the table file, or null
    output: str | None = local_path(omit_none=True)  # the decomposed .pt2
    mapping: str | None = local_path(omit_none=True)  # its node mapping file (core/compare/mapping.py)
    nodes_before: int | None = optional()
    nodes_after: int | None = optional()
    op_diff: list[OpChange] | None = optional()  # biggest change first, then by name
    non_core_ops: dict[str, int] | None = optional()  # ops outside core ATen in the result, with their counts
    mapping_methods: dict[str, int] | None = optional()
    unmapped_before: list[str] | None = optional()
    unmapped_after: list[str] | None = optional()
    imported: list[str] | None = optional()  # modules imported to load the program (core/jobs/loading.py)
    imports: list[dict[str, Any]] | None = optional()  # what was imported and why (core/jobs/import_policy.py)
    seconds: dict[str, float] = items(dict)  # load, decompose, map, save
    log: list[str] = items()


__all__ = ["DecomposeRequest", "DecomposeResult", "OpChange"]
