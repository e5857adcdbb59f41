"""Which schema reads each job's request and result, by the job names of core/worker/__main__.py's JOBS."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.base import Schema
from pt2_viewer.core.jobs.schemas.decompose import DecomposeRequest, DecomposeResult
from pt2_viewer.core.jobs.schemas.export import ExportDone, ExportRequest
from pt2_viewer.core.jobs.schemas.lower import LowerRequest, LowerResult
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.jobs.schemas.run import RunRequest, RunResult


@dataclass(frozen=True)
class JobSchema:
    request: type[Schema]
    result: type[Schema]
    reports_failures: bool = True  # a bad request becomes a failed result (`ok` false, `error`), not a crash


JOB_SCHEMAS: dict[str, JobSchema] = {
    "export_script": JobSchema(ExportRequest, ExportDone, reports_failures=False),
    "decompose": JobSchema(DecomposeRequest, DecomposeResult),
    "run_program": JobSchema(RunRequest, RunResult),
    "numerics": JobSchema(NumericsRequest, NumericsResult),
    "run_pte": JobSchema(ArtifactRunRequest, RunResult),
    "run_aoti": JobSchema(ArtifactRunRequest, RunResult),
    "lower": JobSchema(LowerRequest, LowerResult),
}


def local_path_fields(job: str) -> list[str]:
    """The request fields of `job` that hold local paths: what a worker on another machine must carry there."""
    schema = JOB_SCHEMAS.get(job)
    return schema.request.local_paths() if schema is not None else []


__all__ = ["JOB_SCHEMAS", "JobSchema", "local_path_fields"]
