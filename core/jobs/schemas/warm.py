"""The warm worker's messages (`python -m pt2_viewer.core.worker serve`, core/jobs/warm.py; docs/worker.md).

The client asks for each job with one JSON line on the worker's stdin (`WarmJobLine`); the job's request is the file
`request` names, with its own schema. The worker says it is ready for jobs with a `ready` event (core/jobs/schemas/
events.py), and each job's events carry the job's `job_id`."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.jobs.schemas.base import Schema, local_path


@dataclass
class WarmJobLine(Schema):
    KIND = "warm job line"

    id: int  # the client's number for the job, echoed as `job_id` in its events
    job: str  # a job name: a kind of core/jobs/kinds.py
    request: str = local_path(default="")  # the request file (OUT/request.json)
    out: str = local_path(default="")  # the job's folder


__all__ = ["WarmJobLine"]
