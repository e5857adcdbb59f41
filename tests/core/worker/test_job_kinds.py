"""Every kind of job (core/jobs/kinds.py) against the worker that runs it: the worker's dispatch imports the module
each kind names and finds its runner there, for that kind and with its request and result types; the warm pool and
the warm worker serve exactly the kinds that say so; a job sends only the events every job sends and those its kind
declares."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import run_job
from pt2_viewer.core.jobs.kinds import EXPORT_SCRIPT, JOB_KINDS, Warm
from pt2_viewer.core.jobs.schemas.events import EVENTS
from pt2_viewer.core.jobs.schemas.run import ProgramRequest
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.jobs.typed_job import TypedJob
from pt2_viewer.core.jobs.warm import WarmPool
from pt2_viewer.core.worker.__main__ import load_job

ENV = {"OMP_NUM_THREADS": "1"}  # two shared cores: keep torch from spawning a thread per core
EVENT_PREFIX = "[pt2v-event] "  # a worker with no events pipe writes its events to stderr so


def test_every_kind_is_run_by_the_module_it_names_with_its_types() -> None:
    assert len({kind.name for kind in JOB_KINDS}) == len(JOB_KINDS)
    for kind in JOB_KINDS:
        runner = load_job(kind.name)  # the worker's dispatch: imports the kind's module
        assert isinstance(runner, TypedJob) and runner.kind is kind, kind.name
        assert sys.modules[kind.module].run_job is runner
        hints = typing.get_type_hints(runner.typed)
        first = next(iter(inspect.signature(runner.typed).parameters))
        assert (hints[first], hints["return"]) == (kind.request, kind.result), kind.name
    with pytest.raises(ValueError, match="there is no job named 'lower_tflite' \\(jobs: decompose, export_script"):
        load_job("lower_tflite")


def test_the_warm_pool_serves_the_kinds_that_say_so(tmp_path: Path) -> None:
    pool = WarmPool(enabled=True)
    for kind in JOB_KINDS:
        fields = {"program": str(tmp_path / "p.pt2")} if issubclass(kind.request, ProgramRequest) else {}
        key = pool.key(JobSpec(kind.name, kind.request(**fields), tmp_path / kind.name))
        assert (key is not None) == (kind.warm is not Warm.NEVER), kind.name
        if kind.warm is not Warm.NEVER:
            assert issubclass(kind.request, ProgramRequest), f"{kind.name}: a warm worker is a program's"
    # both run the user's script in a fresh process: export patches torch.export, the trace sets what torch reads
    # as it is imported (TORCH_TRACE, the cache switches)
    assert [kind.name for kind in JOB_KINDS if kind.warm is Warm.NEVER] == ["export_script", "trace_script"]


def test_the_warm_worker_refuses_a_kind_it_may_not_serve(tmp_path: Path) -> None:
    """`serve` runs a job only in a fresh worker when its kind says so (export_script runs the user's script as
    __main__ and patches torch.export), whatever its client asks."""
    never = [kind for kind in JOB_KINDS if kind.warm is Warm.NEVER]
    assert never
    env = {k: v for k, v in os.environ.items() if k != protocol.EVENTS_FD_ENV}
    proc = subprocess.Popen([sys.executable, "-m", "pt2_viewer.core.worker", "serve", "--idle-timeout", "300"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**env, **ENV}, text=True)
    assert proc.stdin is not None and proc.stderr is not None
    try:
        (tmp_path / "request.json").write_text(json.dumps(EXPORT_SCRIPT.request().to_json()))
        line = {"id": 1, "job": never[0].name, "request": str(tmp_path / "request.json"), "out": str(tmp_path)}
        proc.stdin.write(json.dumps(line) + "\n")
        proc.stdin.flush()
        events = []
        for text in proc.stderr:  # the worker's events, until the job's end (the stdin stays open till then)
            if text.startswith(EVENT_PREFIX):
                events.append(json.loads(text[len(EVENT_PREFIX):]))
                if events[-1]["type"] in (protocol.DONE, protocol.ERROR):
                    break
        assert [e["type"] for e in events] == ["started", "ready", "started", "error"], events
        assert events[-1]["job_id"] == 1
        assert f"the job '{never[0].name}' runs only in a fresh worker" in events[-1]["message"]
        assert proc.wait(timeout=60) == 1  # a job that raised ends the warm worker
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stderr.close()


def test_a_job_sends_the_events_of_every_job_and_those_its_kind_declares(tmp_path: Path) -> None:
    script = tmp_path / "one_export.py"
    script.write_text("import torch\n\n\n"
                      "class AddOne(torch.nn.Module):\n"
                      "    def forward(self, x):\n"
                      "        return x + 1\n\n\n"
                      "torch.export.export(AddOne(), (torch.randn(2),))\n"
                      "raise RuntimeError('the script stops here')\n")
    job, outcome = run_job("export_script", {"script": str(script)}, tmp_path / "out", env=ENV, timeout_s=300)
    assert outcome.status == protocol.OK, outcome.message
    sent = {event["type"] for event in job.events}
    assert sent - set(EVENTS) == set(EXPORT_SCRIPT.events)  # export_started, export_finished, script_error
