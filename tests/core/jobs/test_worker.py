"""The worker process and its Qt-free client: events, streamed output, crashes in words, cancel, timeout, memory
limit, and the TrustStore that guards running a script at all.

Scripts under tests/scripts/ misbehave on purpose (segfault, os._exit, hang, eat memory). Waiting is done on the
pipes and on pidfds, never with sleep.
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import WorkerJob, run_job
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.platform.trust import TrustStore, content_hash

SCRIPTS = Path(__file__).parents[2] / "scripts"
ENV = {"OMP_NUM_THREADS": "1"}  # two shared cores: keep torch from spawning a thread per core
JOB = "export_script"


def request(name: str) -> dict:
    return {"script": str(SCRIPTS / name)}


def pump_until(job: WorkerJob, done, limit_s: float = 120.0) -> None:
    """Drive the job the way the GUI does (wait on its fds, then poll) until done() is true or it ends."""
    give_up = time.monotonic() + limit_s
    while not done() and job.poll():
        assert time.monotonic() < give_up, "the worker did not get there in time"
        fds = job.fds()
        if fds:
            select.select(fds, [], [], 0.1)


def dead_within(pid: int, seconds: float) -> bool:
    """True if process `pid` (not our child) exits within `seconds`: a pidfd becomes readable when it does."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], max(seconds, 0.0))[0]) or _zombie(pid)
    finally:
        os.close(fd)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


# --- protocol ------------------------------------------------------------------------------------------------------

def test_events_are_json_lines_and_garbage_is_reported_not_raised():
    line = protocol.encode_event({"type": "progress", "stage": "x", "path": Path("/a")})
    assert line.endswith(b"\n") and protocol.decode_event(line) == {"type": "progress", "stage": "x", "path": "/a"}
    assert protocol.decode_event(b"not json\n") == {"type": "garbled", "text": "not json"}
    assert protocol.decode_event("[1, 2]")["type"] == "garbled"
    with pytest.raises(ValueError, match="without a 'type'"):
        protocol.encode_event({"stage": "x"})


def test_events_of_the_wrong_shape_are_garbled_not_acted_on():
    """The events channel is untrusted (the script runs in the worker): only well-formed events count."""
    for forged in ['{"type": "progress", "fraction": "lots"}', '{"type": "progress", "fraction": NaN}',
                   '{"type": "progress", "fraction": 7}', '{"type": "done", "result": "/etc/passwd"}',
                   '{"type": "error", "message": {"a": 1}}', "[" * 100_000]:
        assert protocol.decode_event(forged)["type"] == "garbled", forged
    assert protocol.decode_event('{"type": "progress", "fraction": 0.5, "message": "m"}')["fraction"] == 0.5
    assert protocol.decode_event('{"type": "done", "result": "result.json"}')["type"] == protocol.DONE


def test_exit_codes_in_words():
    assert "segmentation fault (SIGSEGV)" in protocol.describe_exit(-signal.SIGSEGV)
    assert "out of memory" in protocol.describe_exit(-signal.SIGKILL)
    assert "SIGABRT" in protocol.describe_exit(-signal.SIGABRT)
    assert "exited with code 3" in protocol.describe_exit(3)
    assert "os._exit(0)" in protocol.describe_exit(0)
    assert protocol.describe_exit(0, got_result=True) == "The worker finished normally."
    assert "SIGUSR1" in protocol.describe_exit(-signal.SIGUSR1)


# --- the client ----------------------------------------------------------------------------------------------------

def test_output_streams_line_by_line_while_the_script_runs(tmp_path):
    flag = tmp_path / "flag"
    seen: list[tuple[str, str]] = []

    def on_output(stream: str, line: str) -> None:
        seen.append((stream, line))
        if line == "first line on stdout":
            flag.touch()  # the script finishes only after this: the line arrived while it was running

    job = WorkerJob(JobSpec(JOB, request("streaming.py"), tmp_path / "out", env={**ENV, "PT2V_TEST_FLAG": str(flag)},
                            on_output=on_output, timeout_s=120))
    finished = []
    job.on_finished = finished.append
    job.start()
    assert job.running and len(job.fds()) == 3
    pump_until(job, lambda: False)
    outcome = job.outcome
    assert outcome.status == protocol.OK, outcome.message
    assert finished == [outcome]
    assert ("stdout", "first line on stdout") in seen and ("stderr", "a line on stderr") in seen
    assert seen.index(("stdout", "first line on stdout")) < seen.index(("stdout", "saw the flag"))
    types = [e["type"] for e in job.events]
    assert types[0] == "started" and types[-1] == "done" and "progress" in types
    assert outcome.result["script_ok"] is True and outcome.result["calls"] == 0
    assert json.loads((tmp_path / "out" / "result.json").read_text()) == outcome.result
    assert job.fds() == [] and not job.poll()


def test_segfault_is_reported_in_words_and_output_before_it_is_kept(tmp_path):
    job, outcome = run_job(JOB, request("segfault.py"), tmp_path, env=ENV, timeout_s=120)
    assert outcome.status == protocol.CRASHED
    assert outcome.returncode == -signal.SIGSEGV
    assert "segmentation fault" in outcome.message
    assert "about to crash" in job.stdout_lines


def test_os_exit_is_reported_as_the_script_ending_the_process(tmp_path):
    job, outcome = run_job(JOB, request("os_exit.py"), tmp_path, env=ENV, timeout_s=120)
    assert outcome.status == protocol.CRASHED and outcome.returncode == 3
    assert "exited with code 3 before the job finished" in outcome.message
    assert "leaving now" in job.stdout_lines


def test_cancel_kills_the_worker_and_its_children_within_a_second(tmp_path):
    job = WorkerJob(JobSpec(JOB, request("hang.py"), tmp_path, env=ENV, timeout_s=120))
    job.start()
    pump_until(job, lambda: any(line.startswith("child pid") for line in job.stdout_lines))
    child = int(next(line for line in job.stdout_lines if line.startswith("child pid")).split()[-1])
    worker = job.pid
    started = time.monotonic()
    job.cancel()
    elapsed = time.monotonic() - started
    assert job.outcome.status == protocol.CANCELLED and "Cancelled" in job.outcome.message
    assert elapsed < 1.0, f"cancel took {elapsed:.2f} s"
    assert dead_within(worker, 0) and dead_within(child, 1.0 - elapsed)
    assert job.outcome.returncode == -signal.SIGKILL


def test_timeout_stops_a_hanging_script(tmp_path):
    job, outcome = run_job(JOB, request("hang.py"), tmp_path, env=ENV, timeout_s=2.0)
    assert outcome.status == protocol.TIMED_OUT
    assert "time limit of 2 s" in outcome.message
    assert 2.0 <= outcome.duration_s < 4.0
    assert dead_within(job.pid, 0)


def test_memory_limit_turns_a_memory_eater_into_a_reported_error(tmp_path):
    job, outcome = run_job(JOB, request("eat_memory.py"), tmp_path, env=ENV, timeout_s=120, memory_limit_mb=1500)
    assert outcome.status == protocol.OK, outcome.message
    report = json.loads((tmp_path / "report.json").read_text())
    error = report["script_error"]
    assert error["type"] == "MemoryError"
    assert error["line"]["code"] == "hoard.append(bytearray(64 * 1024 * 1024))"
    assert "out of memory" in error["hint"]


def test_bad_requests_fail_with_a_message_that_says_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="there is no job named 'no_such_job'"):
        JobSpec("no_such_job", {}, tmp_path / "a")  # no kind has that name: refused before a worker starts
    _, outcome = run_job(JOB, {"script": str(tmp_path / "missing.py")}, tmp_path / "b", env=ENV)
    assert outcome.status == protocol.FAILED
    assert re.search(r"missing\.py does not exist", outcome.message)
    assert "Traceback" in outcome.error_traceback
    # the worker refuses it too, whoever wrote the request
    (tmp_path / "request.json").write_text("{}")
    for name in ("no_such_job", "../evil"):
        run = subprocess.run([sys.executable, "-m", "pt2_viewer.core.worker", name, "--request",
                              str(tmp_path / "request.json"), "--out", str(tmp_path / "c")],
                             capture_output=True, text=True, env={**os.environ, **ENV}, timeout=120)
        assert run.returncode == 1 and f"there is no job named '{name}'" in run.stderr, run.stderr


def test_a_python_that_cannot_start_is_reported(tmp_path):
    job = WorkerJob(JobSpec(JOB, request("os_exit.py"), tmp_path, python=str(tmp_path / "no-python")))
    job.start()
    assert job.outcome.status == protocol.START_FAILED and "Could not start the worker" in job.outcome.message
    assert job.wait() is job.outcome
    with pytest.raises(RuntimeError, match="only once"):
        job.start()


def test_worker_command_follows_the_architecture(tmp_path):
    job = WorkerJob(JobSpec(JOB, {}, tmp_path, memory_limit_mb=512))
    assert job.command() == [sys.executable, "-m", "pt2_viewer.core.worker", JOB,
                             "--request", str(tmp_path / "request.json"),
                             "--out", str(tmp_path), "--max-memory-mb", "512"]


# --- trust ---------------------------------------------------------------------------------------------------------

def test_trust_is_remembered_per_path_and_content(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("print('v1')\n")
    store = TrustStore(tmp_path / "conf" / "trusted.json")
    assert not store.is_trusted(script)
    store.trust(script)
    assert store.is_trusted(script) and TrustStore(store.path).is_trusted(str(script))
    saved = json.loads(store.path.read_text())
    assert saved["scripts"][str(script.resolve())]["sha256"] == content_hash(script)
    script.write_text("print('v2')\n")  # changed content: ask again
    assert not store.is_trusted(script)
    store.trust(script)
    assert store.is_trusted(script)
    store.forget(script)
    assert not store.is_trusted(script)
    assert not store.is_trusted(tmp_path / "never-existed.py")


def test_damaged_trust_file_trusts_nothing_and_is_repaired(tmp_path):
    store = TrustStore(tmp_path / "trusted.json")
    store.path.write_text("{not json")
    script = tmp_path / "m.py"
    script.write_text("x = 1\n")
    assert not store.is_trusted(script)
    store.trust(script)
    assert store.is_trusted(script)


def test_default_trust_file_lives_under_xdg_config_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert TrustStore.default().path == tmp_path / "pt2-viewer" / "trusted.json"
