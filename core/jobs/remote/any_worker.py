"""One seam for starting a job on the chosen worker: a local `WorkerJob`, or a `RemoteJob` over ssh.

`worker_job(job, request, out_dir, worker=FLAG, **options)` takes WorkerJob's options; `worker` is a command's
`--worker` (a local Python path or `ssh://[user@]host[:port]/ABS/PATH/python`); without it the choice is
PT2V_WORKER, then PT2V_WORKER_PYTHON, then Preferences, then this Python (python_env.choose_worker).
"""
from __future__ import annotations

import os
from typing import Any

from pt2_viewer.core.jobs.client import WorkerJob
from pt2_viewer.core.jobs.python_env import FROM_DEFAULT, choose_worker, preferred_scratch
from pt2_viewer.core.jobs.remote.job import RemoteJob
from pt2_viewer.core.jobs.remote.target import RemoteWorker, WorkerUrlError, parse_worker_url

AnyWorkerJob = WorkerJob | RemoteJob


def worker_job(job: str, request: dict[str, Any], out_dir: str | os.PathLike[str], worker: str | None = None,
               **options: Any) -> AnyWorkerJob:
    """A job (not started yet) on the chosen worker. A malformed ssh:// URL gives a job whose start fails saying
    what is wrong with it."""
    choice = choose_worker(worker)
    if choice.remote:
        try:
            target = parse_worker_url(choice.path, preferred_scratch())
        except WorkerUrlError as e:
            return RemoteJob(job, request, out_dir, worker=RemoteWorker("", ""), problem=f"{e} ({choice.describe()})",
                             **options)
        return RemoteJob(job, request, out_dir, worker=target, **options)
    if choice.source != FROM_DEFAULT and not options.get("python"):
        options["python"] = choice.path
    return WorkerJob(job, request, out_dir, **options)
