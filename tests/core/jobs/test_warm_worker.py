"""The warm worker (core/jobs/warm.py, `python -m pt2_viewer.core.worker serve`): a second job on the same program does
not load it again (seen in the jobs' `program_loaded` events), a job never sees what an earlier job changed, the trust
check holds for every job, and cancel, crash, idle, memory cap and release end the worker, the next job starting a
fresh one. Behaviour only: no timings, no sleeps."""
from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import WorkerJob
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.jobs.warm import WarmJob, WarmPool
from tests import hostile_archives as hostile
from tests.core.jobs.test_worker import dead_within, pump_until
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)

BASE = "dynamic_shapes"
ENV = {"OMP_NUM_THREADS": "1"}
RUN = {"runs": 1, "warmup": 0}


@pytest.fixture
def pool():  # type: ignore[no-untyped-def]
    p = WarmPool(idle_timeout_s=120, enabled=True)
    yield p
    p.close()


def run(pool: WarmPool, job: str, request: dict[str, Any], out: Path) -> WarmJob | WorkerJob:
    j = pool.job(JobSpec(job, request, out, env=ENV))
    j.start()
    j.wait()
    return j


def loads(job: WarmJob | WorkerJob) -> list[dict[str, Any]]:
    return [e for e in job.events if e["type"] == "program_loaded"]


def test_second_job_on_the_same_program_does_not_load_it_again(pool, pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    program = str(pt2_path(BASE))
    first = run(pool, "decompose", {"program": program, "to": "core"}, tmp_path / "d1")
    assert isinstance(first, WarmJob) and first.outcome and first.outcome.ok, first.outcome
    assert first.outcome.result and first.outcome.result["ok"], first.outcome.result
    assert [e["reused"] for e in loads(first)] == [False]

    second = run(pool, "run_program", {"program": program, **RUN}, tmp_path / "r1")
    assert isinstance(second, WarmJob) and second.outcome and second.outcome.ok
    assert second.outcome.result and second.outcome.result["ok"], second.outcome.result
    assert second.pid == first.pid  # the same process ...
    assert [e["reused"] for e in loads(second)] == [True]  # ... and no second load

    third = run(pool, "decompose", {"program": program, "to": "core"}, tmp_path / "d2")
    assert third.pid == first.pid and [e["reused"] for e in loads(third)] == [True]
    assert third.outcome and third.outcome.result
    same = ("nodes_before", "nodes_after", "op_diff")
    assert {k: third.outcome.result[k] for k in same} == {k: first.outcome.result[k] for k in same}


def test_a_job_that_changes_the_weights_makes_the_next_one_load_again(pool, pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    program = str(pt2_path("batchnorm_train"))  # running it updates BatchNorm's running stats and a counter buffer
    first = run(pool, "run_program", {"program": program, **RUN, "seed": 1}, tmp_path / "r1")
    second = run(pool, "run_program", {"program": program, **RUN, "seed": 1}, tmp_path / "r2")
    assert first.outcome and second.outcome and first.outcome.result and second.outcome.result
    assert second.pid == first.pid
    assert [e["reused"] for e in loads(second)] == [False]  # reloaded, not reused with changed buffers
    assert second.outcome.result["outputs"] == first.outcome.result["outputs"]


def test_every_job_passes_the_trust_check_even_on_a_loaded_program(pool, pt2_path, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    payload = hostile.Payload.make(tmp_path / "payload")
    monkeypatch.syspath_prepend(str(payload.path))
    path = str(hostile.build("pickled_weight", pt2_path(BASE), tmp_path / "archives", payload))
    refused = run(pool, "run_program", {"program": path, **RUN}, tmp_path / "a")
    assert refused.outcome and refused.outcome.result
    assert refused.outcome.result["error"]["kind"] == "untrusted" and not payload.marker.exists()
    trusted = run(pool, "run_program", {"program": path, **RUN, "trust": True}, tmp_path / "b")
    assert trusted.outcome and trusted.outcome.result and trusted.outcome.result["ok"], trusted.outcome.result
    again = run(pool, "decompose", {"program": path, "to": "functional"}, tmp_path / "c")
    assert isinstance(again, WarmJob) and again.pid == trusted.pid
    assert again.outcome and again.outcome.result and again.outcome.result["error"]["kind"] == "untrusted"


def test_cancel_ends_the_warm_worker_and_the_next_job_starts_a_fresh_one(pool, pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    program = str(pt2_path(BASE))
    job = pool.job(JobSpec("run_program", {"program": program, "runs": 10**9, "warmup": 0}, tmp_path / "r1", env=ENV))
    assert isinstance(job, WarmJob)
    job.start()
    pump_until(job, lambda: any(e.get("stage") == "eager" for e in job.events))  # type: ignore[arg-type]
    pid = job.pid
    assert pid is not None
    job.cancel()
    assert job.outcome and job.outcome.status == protocol.CANCELLED
    assert dead_within(pid, 5)
    after = run(pool, "run_program", {"program": program, **RUN}, tmp_path / "r2")
    assert isinstance(after, WarmJob) and after.pid != pid and after.outcome and after.outcome.ok
    assert [e["reused"] for e in loads(after)] == [False]


def test_a_crash_is_reported_and_the_next_job_starts_a_fresh_worker(pool, pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    program = str(pt2_path(BASE))
    job = pool.job(JobSpec("run_program", {"program": program, "runs": 10**9, "warmup": 0}, tmp_path / "r1", env=ENV))
    job.start()
    pump_until(job, lambda: any(e.get("stage") == "eager" for e in job.events))  # type: ignore[arg-type]
    assert job.pid is not None
    os.kill(job.pid, signal.SIGSEGV)
    job.wait()
    assert job.outcome and job.outcome.status == protocol.CRASHED and "SIGSEGV" in job.outcome.message
    after = run(pool, "decompose", {"program": program, "to": "functional"}, tmp_path / "d")
    assert after.pid != job.pid and after.outcome and after.outcome.ok


def test_the_worker_ends_when_its_program_is_released_idle_or_over_the_memory_cap(pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    program = str(pt2_path(BASE))
    pool = WarmPool(idle_timeout_s=120, enabled=True)
    holder = object()
    pool.hold(program, holder)
    first = run(pool, "run_program", {"program": program, **RUN}, tmp_path / "a")
    assert first.pid is not None and not dead_within(first.pid, 0)
    pool.release(holder)  # the tab closed
    assert dead_within(first.pid, 5) and not pool.workers

    idle = WarmPool(idle_timeout_s=0.5, enabled=True)
    worker = idle.prewarm(program, env=ENV)
    assert worker is not None and worker.pid is not None
    assert dead_within(worker.pid, 60)  # it exits by itself after half a second without a job
    idle.reap()
    assert not idle.workers

    capped = WarmPool(idle_timeout_s=120, memory_cap_mb=1, enabled=True)
    one = run(capped, "run_program", {"program": program, **RUN}, tmp_path / "b")
    two = run(capped, "run_program", {"program": program, **RUN}, tmp_path / "c")
    assert one.pid != two.pid  # the first worker went over 1 MB: ended after its job
    capped.close()
    assert two.pid is not None and dead_within(two.pid, 5)


def test_scripts_programless_jobs_and_busy_workers_run_one_shot(pool, pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    program = str(pt2_path(BASE))
    assert isinstance(pool.job(JobSpec("export_script", {"script": "x.py"}, tmp_path / "e")), WorkerJob)
    assert isinstance(pool.job(JobSpec("run_program", {"probe_cuda": True}, tmp_path / "p")), WorkerJob)
    busy = pool.job(JobSpec("run_program", {"program": program, "runs": 10**9, "warmup": 0}, tmp_path / "r1", env=ENV))
    busy.start()
    beside = pool.job(JobSpec("decompose", {"program": program, "to": "functional"}, tmp_path / "d", env=ENV))
    assert isinstance(busy, WarmJob) and isinstance(beside, WorkerJob)
    busy.cancel()
    assert isinstance(WarmPool(enabled=False).job(JobSpec("decompose", {"program": program},
                                                          tmp_path / "x")), WorkerJob)
