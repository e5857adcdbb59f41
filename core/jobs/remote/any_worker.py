"""One seam for starting a job on the chosen worker: a local `WorkerJob`, or a `RemoteJob` over ssh.

`worker_job(spec, worker=FLAG)` takes the job's `JobSpec`; `worker` is a command's
`--worker` (a local Python path or `ssh://[user@]host[:port]/ABS/PATH/python`); without it the choice is
PT2V_WORKER, then PT2V_WORKER_PYTHON, then Preferences, then this Python (python_env.choose_worker).
"""
from __future__ import annotations

from dataclasses import replace

from pt2_viewer.core.jobs.client import WorkerJob
from pt2_viewer.core.jobs.python_env import FROM_DEFAULT, choose_worker, preferred_scratch
from pt2_viewer.core.jobs.remote.job import RemoteJob
from pt2_viewer.core.jobs.remote.target import RemoteWorker, WorkerUrlError, parse_worker_url
from pt2_viewer.core.jobs.spec import JobSpec

AnyWorkerJob = WorkerJob | RemoteJob


def worker_job(spec: JobSpec, worker: str | None = None) -> AnyWorkerJob:
    """A job (not started yet) on the chosen worker. A malformed ssh:// URL gives a job whose start fails saying
    what is wrong with it."""
    choice = choose_worker(worker)
    if choice.remote:
        try:
            target = parse_worker_url(choice.path, preferred_scratch())
        except WorkerUrlError as e:
            return RemoteJob(spec, RemoteWorker("", ""), problem=f"{e} ({choice.describe()})")
        return RemoteJob(spec, target)
    if choice.source != FROM_DEFAULT and not spec.python:
        spec = replace(spec, python=choice.path)
    return WorkerJob(spec)
