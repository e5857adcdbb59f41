"""The trace job's request and result (`core/export/trace_job.py`: run a script under torch.compile's structured
log, `TORCH_TRACE`, in a fresh worker; docs/trace.md, "From a script").

The logs are written into the job's own folder, `OUT/trace/` (`TRACE_FOLDER`), so a worker on another machine brings
them back with the folder; the command line copies them into the folder the user names, the window opens them where
they lie."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.jobs.schemas.base import Schema, local_path, optional
from pt2_viewer.core.jobs.schemas.failure import JobResult

TRACE_FOLDER = "trace"  # in the job's folder: where torch writes its dedicated_log_torch_trace_*.log
SCRIPT_FAILED = "script"  # the failure kind of a script that stopped with an error (the command's exit status 1)


@dataclass
class TraceRequest(Schema):
    KIND = "trace request"
    VERSIONED = True

    script: str | None = local_path()  # the Python script to run (copied with its folder to a remote worker)


@dataclass
class TraceResult(JobResult):
    """`ok` when the script ran to its end; a script that stopped is the job's failure of kind `script`, its error
    at the user's line, and the logs written before it are still listed."""

    KIND = "trace result"
    VERSIONED = True

    trace: str | None = optional()  # TRACE_FOLDER, in the job's folder
    logs: list[str] | None = optional()  # the log files torch wrote there, by name
    torch_version: str | None = optional()


__all__ = ["SCRIPT_FAILED", "TRACE_FOLDER", "TraceRequest", "TraceResult"]
