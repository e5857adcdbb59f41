"""Every kind of job a worker runs, each declared once: a `JobKind` in `JOB_KINDS`.

A kind says what the worker and its clients need to know about a job: its name (`python -m pt2_viewer.core.worker
NAME`), the module whose `run_job` runs it, its request and result schemas (core/jobs/schemas/), whether a program's
warm worker may run it, the request fields that name files it writes, and the events it sends beyond every job's.
Everything that asks reads this list: the worker's dispatch and the warm worker's rule (core/worker/__main__.py), the
warm pool (core/jobs/warm.py), `JobSpec`'s check of a request (core/jobs/spec.py), and which files a job on another
machine takes there and brings back (core/jobs/remote/paths.py).

Adding a job: its request and result in core/jobs/schemas/, its module (`run(request, out, emit) -> Result`, exposed
as `run_job = TypedJob(run, ITS_KIND)`, core/jobs/typed_job.py), and one `JobKind` here, in `JOB_KINDS`.
tests/core/worker/test_job_kinds.py holds every kind against its module.

The modules are named, not imported: they import torch, and this list is read by the window and the command lines,
which never do (and core/jobs lies below the domain packages that hold the jobs).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.base import Schema
from pt2_viewer.core.jobs.schemas.decompose import DecomposeRequest, DecomposeResult
from pt2_viewer.core.jobs.schemas.export import ExportDone, ExportRequest
from pt2_viewer.core.jobs.schemas.failure import JobResult
from pt2_viewer.core.jobs.schemas.lower import LowerRequest, LowerResult
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.jobs.schemas.onnx_lower import OnnxLowerRequest, OnnxLowerResult
from pt2_viewer.core.jobs.schemas.run import RunRequest, RunResult
from pt2_viewer.core.jobs.schemas.trace import TraceRequest, TraceResult

Req = TypeVar("Req", bound=Schema)
Res = TypeVar("Res", bound=Schema)


class Warm(enum.Enum):
    """Whether a program's warm worker (`python -m pt2_viewer.core.worker serve`, core/jobs/warm.py) runs the job."""

    NEVER = "never"  # always in a fresh worker
    SERVED = "served"  # its module imported when a warm worker is first asked for it
    PREIMPORTED = "preimported"  # its module imported as a warm worker starts, before it says it is ready


@dataclass(frozen=True)
class JobKind(Generic[Req, Res]):
    """One kind of job, as the worker, the warm worker and the clients know it."""

    name: str  # the worker's JOB argument
    module: str  # the module whose `run_job` runs it (imports torch: only the worker imports it)
    request: type[Req]  # read from request.json before the job runs
    result: type[Res]  # what the job returns, written to result.json
    warm: Warm = Warm.SERVED
    outputs: tuple[str, ...] = ()  # the request's local-path fields that name files the job writes
    events: tuple[str, ...] = ()  # event types it sends beyond every job's (schemas/events.py; docs/worker.md)

    @property
    def reports_failures(self) -> bool:
        """A malformed request becomes the job's failed result (`ok` false, an `error` of kind `request`), as every
        job whose result is a `JobResult` reports what it could not do; the others' worker raises."""
        return issubclass(self.result, JobResult)

    def path_fields(self) -> tuple[list[str], list[str]]:
        """(inputs, outputs): the request's top-level fields that hold local paths, those it reads and those it
        writes (what a worker on another machine is sent, and what comes back)."""
        names = list(dict.fromkeys(n for n in self.request.local_paths() if "." not in n))
        return [n for n in names if n not in self.outputs], [n for n in names if n in self.outputs]


EXPORT_SCRIPT = JobKind("export_script", "pt2_viewer.core.export.job", ExportRequest, ExportDone,
                        warm=Warm.NEVER,  # runs the user's script as __main__ and patches torch.export
                        events=("export_started", "export_finished", "script_error"))
DECOMPOSE = JobKind("decompose", "pt2_viewer.core.decompose.job", DecomposeRequest, DecomposeResult,
                    warm=Warm.PREIMPORTED, outputs=("output",))  # with run: torch's export machinery, imported first
RUN_PROGRAM = JobKind("run_program", "pt2_viewer.core.run.job", RunRequest, RunResult, warm=Warm.PREIMPORTED,
                      outputs=("aoti_package",))
NUMERICS = JobKind("numerics", "pt2_viewer.core.numerics.job", NumericsRequest, NumericsResult)
RUN_PTE = JobKind("run_pte", "pt2_viewer.core.run.pte_job", ArtifactRunRequest, RunResult)  # executorch.runtime
RUN_AOTI = JobKind("run_aoti", "pt2_viewer.core.run.aoti_job", ArtifactRunRequest, RunResult)  # after allow_native
LOWER = JobKind("lower", "pt2_viewer.core.deploy.lower", LowerRequest, LowerResult,  # to a .pte, with its ETRecord
                outputs=("output",))
LOWER_ONNX = JobKind("lower_onnx", "pt2_viewer.core.deploy.onnx_lower", OnnxLowerRequest, OnnxLowerResult,
                     outputs=("output",))  # to a .onnx with torch.onnx.export(dynamo=True) and onnxscript
TRACE_SCRIPT = JobKind("trace_script", "pt2_viewer.core.export.trace_job", TraceRequest, TraceResult,
                       warm=Warm.NEVER)  # TORCH_TRACE and the cache switches are read as torch is first imported

JOB_KINDS: tuple[JobKind[Any, Any], ...] = (EXPORT_SCRIPT, DECOMPOSE, RUN_PROGRAM, NUMERICS, RUN_PTE, RUN_AOTI, LOWER,
                                       LOWER_ONNX, TRACE_SCRIPT)
_BY_NAME: dict[str, JobKind[Any, Any]] = {kind.name: kind for kind in JOB_KINDS}


class UnknownJob(ValueError):
    """No job has this name."""


def job_kind(name: str) -> JobKind[Any, Any]:
    """The kind of job named `name`; `UnknownJob` names the jobs there are."""
    kind = _BY_NAME.get(name)
    if kind is None:
        raise UnknownJob(f"there is no job named '{name}' (jobs: {', '.join(sorted(_BY_NAME))})")
    return kind


__all__ = ["DECOMPOSE", "EXPORT_SCRIPT", "JOB_KINDS", "LOWER", "LOWER_ONNX", "NUMERICS", "RUN_AOTI", "RUN_PROGRAM",
           "RUN_PTE", "TRACE_SCRIPT", "JobKind", "UnknownJob", "Warm", "job_kind"]
