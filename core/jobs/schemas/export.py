"""The export job's request (`core/export/job.py`: run a model script and record every `torch.export` call; docs/
worker.md). Its result, report.json, has its own dataclasses in `core/export/report.py` (`ExportReport`), which the job
fills in and the window reads back; `ExportDone` is the small result.json beside it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.jobs.schemas.base import Schema, local_path, optional


@dataclass
class Rerun(Schema):
    """One export call run again with other options."""

    KIND = "rerun"

    call: int | str  # its index in report.json, or "convention" (the job's own export of `model`)
    strict: bool | None = None  # None: as the script had it
    dynamic_shapes: dict[str, Any] | None = None  # the spec as JSON (docs/worker.md)


@dataclass
class ExportRequest(Schema):
    KIND = "export request"
    VERSIONED = True

    script: str | None = local_path()  # the model script (copied with its folder to a remote worker)
    diagnose: bool | None = optional()  # list every problem of each call in one pass (torch's draft export)
    rerun: Rerun | None = optional()
    save: bool | None = optional()  # save each exported program as .pt2 (default true)
    run_as: str | None = optional()  # how the script runs (core/export/job.py)




@dataclass
class ExportDone(Schema):
    """result.json of the export job: where report.json is and what it holds, counted."""

    KIND = "export result"
    VERSIONED = True

    report: str  # "report.json", in the job's folder
    script_ok: bool  # the script ran to its end
    calls: int
    exported: int
    failed: int
    programs: list[str | None]  # the .pt2 file names, in the job's folder


__all__ = ["ExportDone", "ExportRequest", "Rerun"]
