"""Warm workers: one long-lived worker process per open program, so a second job on it does not load it again.

`WarmPool.job(spec)` (a `JobSpec`) returns a job with the one interface of core/jobs/job.py (`Job`:
start, fds, poll, cancel, wait, outcome, events, stdout_lines, stderr_lines; the type checker checks it): a
`WarmJob` that runs in the warm worker for the request's program (`python -m pt2_viewer.core.worker serve`, started
on first use or by `prewarm`), or a plain one-shot `WorkerJob` when the job cannot go warm. Goes warm: a job whose
kind a warm worker serves (`JobKind.warm`, core/jobs/kinds.py: all but `export_script`) and whose request names a
`program`, when that program's worker is alive and idle (or none exists yet). Otherwise one-shot: a busy worker (a
run while a decompose runs), `PT2V_WARM=0`, or no program in the request. The command lines never use the pool:
one-shot.

The worker keeps the loaded `ExportedProgram` (core/jobs/program_cache.py): every job still passes the archive's
safety check with its own `trust`; each gets its own copy of the graph; a job that changed the weights drops them.

Life: a warm worker ends when
- its program's last holder goes (`hold(program, holder)` / `release(holder)`: the GUI holds a program while a tab
  shows it), or `end(program)` / `close()` (the application quits);
- it has been idle `idle_timeout_s` (the worker exits by itself; the pool notices);
- after a job its processes use more than `memory_cap_mb` resident memory (the next job starts afresh);
- a job on it is cancelled, times out, grows past its memory limit (the whole process tree is killed, as for a
  one-shot job), crashes, or raises: the next job falls back to a fresh worker.
If the client process dies, the worker's stdin closes and it exits at once, even mid-job.

A WarmJob's `outcome`, events and messages are those of a one-shot job; its events carry `job_id`, and the job's
`program_loaded` event says whether the program was loaded (`"reused": false`) or reused.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs import process_tree, protocol
from pt2_viewer.core.jobs.client import (
    EVENTS,
    STDOUT,
    JobOutcome,
    PipeReader,
    WorkerJob,
    close_pipes,
    default_memory_mb,
    load_result,
    start_worker_process,
    stopped_message,
)
from pt2_viewer.core.jobs.kinds import Warm
from pt2_viewer.core.jobs.protocol import describe_exit, write_json_atomic
from pt2_viewer.core.jobs.python_env import HOW_TO_FIX, choose_worker_python, worker_environment
from pt2_viewer.core.jobs.schemas.run import ProgramRequest
from pt2_viewer.core.jobs.schemas.warm import WarmJobLine
from pt2_viewer.core.jobs.spec import JobSpec

WARM_ENV = "PT2V_WARM"  # "0": every job one-shot
IDLE_ENV = "PT2V_WARM_IDLE_S"
MEMORY_ENV = "PT2V_WARM_MEMORY_MB"
DEFAULT_IDLE_S = 600.0
READY = "ready"


def default_memory_cap_mb() -> int:
    """Resident memory above which a warm worker is ended after its job: half the one-shot job's cap by default."""
    value = os.environ.get(MEMORY_ENV, "")
    return int(value) if value.isdigit() else max(1024, default_memory_mb() // 2)


def _now() -> float:
    return time.monotonic()


@dataclass(frozen=True)
class WarmKey:
    program: str  # resolved path
    python: str
    preload: str | None
    memory_limit_mb: int | None
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None


class WarmWorker:
    """One `serve` process. Jobs run one at a time; `current` is the one running."""

    def __init__(self, key: WarmKey, idle_timeout_s: float) -> None:
        self.key = key
        self.idle_timeout_s = idle_timeout_s
        self.marker = uuid.uuid4().hex
        self.events: list[dict[str, Any]] = []  # the worker's own events (started, ready)
        self.jobs_run = 0
        self.current: WarmJob | None = None
        self.last_used = _now()
        self.start_error: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._pipes = PipeReader(self._deliver)
        self._tmp: Path | None = None
        self._next_id = 0

    # -- process ---------------------------------------------------------------------------------------------------
    def start(self) -> bool:
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env.update(dict(self.key.env))
        env = worker_environment(env)
        env[protocol.EVENTS_FD_ENV] = str(write_fd)
        env[process_tree.MARKER_ENV] = self.marker
        self._tmp = Path(tempfile.mkdtemp(prefix="pt2v-warm-tmp-"))
        env["TMPDIR"] = str(self._tmp)
        env["PYTHONUNBUFFERED"] = "1"
        cmd = [self.key.python, "-m", "pt2_viewer.core.worker", "serve", "--idle-timeout", f"{self.idle_timeout_s:g}"]
        if self.key.memory_limit_mb:
            cmd += ["--max-memory-mb", str(int(self.key.memory_limit_mb))]
        try:
            self._proc = start_worker_process(cmd, env=env, cwd=self.key.cwd, pass_fds=(write_fd,),
                                              stdin=subprocess.PIPE)
        except OSError as e:
            os.close(read_fd)
            os.close(write_fd)
            self._remove_tmp()
            self.start_error = (f"Could not start the worker's Python {self.key.python}: {e.strerror or e}. "
                                f"{HOW_TO_FIX}")
            return False
        os.close(write_fd)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._pipes.add(EVENTS, read_fd)
        self._pipes.add(STDOUT, self._proc.stdout.fileno())
        self._pipes.add("stderr", self._proc.stderr.fileno())
        return True

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def idle(self) -> bool:
        return self.current is None

    @property
    def ready(self) -> bool:
        """torch and the jobs are imported: a job starts at once."""
        return any(e.get("type") == READY for e in self.events)

    def fds(self) -> list[int]:
        return self._pipes.fds()

    def rss_mb(self) -> float:
        return process_tree.usage(self.marker).rss_bytes / (1024 * 1024)

    def read(self) -> None:
        self._pipes.read()

    def submit(self, job: WarmJob) -> None:
        assert self._proc is not None and self._proc.stdin is not None and self.current is None
        self._next_id += 1
        job.job_id = self._next_id
        self.current = job
        line = json.dumps(WarmJobLine(id=job.job_id, job=job.job, out=str(job.out_dir),
                                      request=str(job.out_dir / protocol.REQUEST_FILE)).to_json()) + "\n"
        try:
            self._proc.stdin.write(line.encode("utf-8"))
            self._proc.stdin.flush()
        except OSError:  # it died in the meantime: the job's poll notices the exit
            pass

    def job_done(self, job: WarmJob) -> None:
        if self.current is job:
            self.current = None
            self.jobs_run += 1
            self.last_used = _now()

    def kill(self) -> None:
        """End the worker and everything it started, now; close its pipes."""
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process_tree.kill_marked(self.marker)
            try:
                self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        self.read()
        self.close_pipes()

    def close_pipes(self) -> None:
        self._pipes.close_all()
        if self._proc is not None:
            close_pipes(self._proc)
        self._remove_tmp()

    def returncode(self) -> int | None:
        return self._proc.poll() if self._proc is not None else None

    def _remove_tmp(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _deliver(self, name: str, line: bytes) -> None:
        job = self.current
        if name == EVENTS:
            event = protocol.decode_event(line)
            if job is not None and event.get("job_id") == job.job_id:
                job.deliver_event(event)
            elif "job_id" not in event:
                self.events.append(event)
            return
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        if job is not None:
            job.deliver_output(name, text)


class WarmJob:
    """One job in a warm worker, with `WorkerJob`'s interface and outcomes."""

    warm = True

    def __init__(self, worker: WarmWorker, spec: JobSpec) -> None:
        """`spec.python`, `env` and `cwd` are the worker's (its key), not the job's."""
        self.worker = worker
        self.spec = spec
        self.job = spec.job
        self.request = spec.request
        self.out_dir = spec.folder
        self.timeout_s = spec.time_limit_s
        self.memory_limit_mb = spec.memory_limit_mb
        self.tree_memory_mb = default_memory_mb() if spec.memory_limit_mb is None else (spec.memory_limit_mb or None)
        self.on_event = spec.on_event
        self.on_output = spec.on_output
        self.on_finished = spec.on_finished
        self.job_id: int | None = None
        self.events: list[dict[str, Any]] = []
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self.outcome: JobOutcome | None = None
        self._started_at = 0.0
        self._deadline: float | None = None
        self._final: dict[str, Any] | None = None
        self._next_memory_check = 0.0

    @property
    def pid(self) -> int | None:
        return self.worker.pid

    @property
    def running(self) -> bool:
        return self._started_at > 0 and self.outcome is None

    def start(self) -> None:
        if self._started_at or self.outcome is not None:
            raise RuntimeError("a WarmJob can be started only once; make a new one to run again")
        self._started_at = _now()
        if self.timeout_s is not None:
            self._deadline = self._started_at + self.timeout_s
        self.out_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.out_dir / protocol.REQUEST_FILE, self.request.to_json())  # the worker reads it
        if not self.worker.alive:
            self._finish(protocol.START_FAILED, self.worker.start_error or describe_exit(self.worker.returncode()))
            return
        self.worker.submit(self)

    def fds(self) -> list[int]:
        return self.worker.fds() if self.running else []

    def poll(self) -> bool:
        if not self.running:
            return False
        self.worker.read()
        if self.outcome is not None:  # a callback cancelled it
            return False
        if self._final is not None:
            self._conclude()
            return False
        if self._deadline is not None and _now() > self._deadline:
            self._stop(protocol.TIMED_OUT)
            return False
        if self.tree_memory_mb and _now() >= self._next_memory_check:
            self._next_memory_check = _now() + 0.5
            if self.worker.rss_mb() > self.tree_memory_mb:
                self._stop(protocol.OUT_OF_MEMORY)
                return False
        if not self.worker.alive:
            self.worker.read()
            if self._final is not None:
                self._conclude()
            else:
                self.worker.kill()
                rc = self.worker.returncode()
                self.worker.job_done(self)
                self._finish(protocol.CRASHED, describe_exit(rc), rc)
            return False
        return True

    def wait(self) -> JobOutcome:
        import selectors

        if not self._started_at and self.outcome is None:
            self.start()
        with selectors.DefaultSelector() as sel:
            while self.poll():
                fds = self.fds()
                for fd in fds:
                    sel.register(fd, selectors.EVENT_READ)
                sel.select(timeout=0.1)
                for fd in fds:
                    sel.unregister(fd)
        assert self.outcome is not None
        return self.outcome

    def cancel(self) -> None:
        """Kill the warm worker and all it started (a job cannot be stopped halfway safely); the next job starts
        a fresh worker."""
        if self.running:
            self._stop(protocol.CANCELLED)

    # -- from the worker -------------------------------------------------------------------------------------------
    def deliver_event(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if event["type"] in (protocol.DONE, protocol.ERROR):
            self._final = event
        if self.on_event:
            self.on_event(event)

    def deliver_output(self, name: str, text: str) -> None:
        (self.stdout_lines if name == STDOUT else self.stderr_lines).append(text)
        if self.on_output:
            self.on_output(name, text)

    # -- internals -------------------------------------------------------------------------------------------------
    def _stop(self, reason: str) -> None:
        self.worker.kill()
        rc = self.worker.returncode()
        self.worker.job_done(self)
        self._finish(reason, stopped_message(reason, self.timeout_s, self.tree_memory_mb), rc)

    def _conclude(self) -> None:
        final = self._final or {}
        self.worker.job_done(self)
        if final.get("type") == protocol.DONE:
            self._finish(protocol.OK, "Finished.", 0, result=load_result(self.out_dir))
            return
        self.worker.kill()  # it raised: the worker exits by itself; make sure nothing of it is left
        self._finish(protocol.FAILED, f"The job failed: {final.get('message', 'no message')}",
                     self.worker.returncode(), error=final.get("message"), error_traceback=final.get("traceback"))

    def _finish(self, status: str, message: str, returncode: int | None = None, **kw: Any) -> None:
        elapsed = _now() - self._started_at if self._started_at else 0.0
        self.outcome = JobOutcome(status, message, returncode, duration_s=elapsed, out_dir=self.out_dir, **kw)
        if self.on_finished:
            self.on_finished(self.outcome)


AnyJob = WorkerJob | WarmJob  # both keep core/jobs/job.py's `Job`


class WarmPool:
    """The warm workers of this process, by program (and Python, import-first file, limits, environment)."""

    def __init__(self, idle_timeout_s: float | None = None, memory_cap_mb: int | None = None,
                 enabled: bool | None = None) -> None:
        idle = os.environ.get(IDLE_ENV, "")
        self.idle_timeout_s = idle_timeout_s if idle_timeout_s is not None else (
            float(idle) if idle.replace(".", "", 1).isdigit() else DEFAULT_IDLE_S)
        self.memory_cap_mb = memory_cap_mb if memory_cap_mb is not None else default_memory_cap_mb()
        self.enabled = enabled if enabled is not None else os.environ.get(WARM_ENV, "1") != "0"
        self.workers: dict[WarmKey, WarmWorker] = {}
        self._holders: dict[str, set[int]] = {}  # program -> ids of its holders

    # -- jobs ------------------------------------------------------------------------------------------------------
    def key(self, spec: JobSpec) -> WarmKey | None:
        """The warm worker `spec` runs in, or None when it runs one-shot."""
        if spec.kind.warm is Warm.NEVER:
            return None
        return self._key(spec.request, spec.python, spec.memory_limit_mb, spec.env, spec.cwd)

    def _key(self, request: object, python: str | None = None, memory_limit_mb: int | None = None,
             env: dict[str, str] | None = None, cwd: str | None = None) -> WarmKey | None:
        """A job on a program (ProgramRequest): its worker is that program's, with the job's Python and limits."""
        if not self.enabled or not isinstance(request, ProgramRequest) or not request.program:
            return None
        return WarmKey(program=str(Path(request.program).resolve()),
                       python=python or choose_worker_python().path,
                       preload=request.preload or None,
                       memory_limit_mb=memory_limit_mb,
                       env=tuple(sorted((str(k), str(v)) for k, v in (env or {}).items())), cwd=cwd)

    def job(self, spec: JobSpec) -> AnyJob:
        """A job that runs warm when it can, else one-shot; not started yet (call `start()`)."""
        self.reap()
        key = self.key(spec)
        worker = self._worker(key) if key is not None else None
        if worker is None:
            return WorkerJob(spec)
        return WarmJob(worker, spec)

    def prewarm(self, program: str, python: str | None = None, memory_limit_mb: int | None = None,
                env: dict[str, str] | None = None, cwd: str | None = None) -> WarmWorker | None:
        """Start the program's worker now (it imports torch while the user chooses what to do); the options are those
        of the JobSpecs that will run in it."""
        self.reap()
        key = self._key(ProgramRequest(program=program), python, memory_limit_mb, env, cwd)
        return self._worker(key) if key is not None else None

    def _worker(self, key: WarmKey) -> WarmWorker | None:
        worker = self.workers.get(key)
        if worker is not None and not worker.idle:
            return None  # busy: this job runs one-shot beside it
        if worker is None:
            worker = WarmWorker(key, self.idle_timeout_s)
            if not worker.start():
                return None  # the one-shot job says why in its own outcome
            self.workers[key] = worker
        return worker

    # -- life ------------------------------------------------------------------------------------------------------
    def hold(self, program: str, holder: object) -> None:
        self._holders.setdefault(str(Path(program).resolve()), set()).add(id(holder))

    def release(self, holder: object) -> None:
        """`holder` no longer shows its program: end the workers of programs nobody holds (after their job)."""
        for program, holders in list(self._holders.items()):
            holders.discard(id(holder))
            if not holders:
                del self._holders[program]
                self.end(program)

    def end(self, program: str) -> None:
        path = str(Path(program).resolve())
        for key, worker in list(self.workers.items()):
            if key.program == path and worker.idle:
                self._drop(key)

    def reap(self) -> None:
        """Forget workers that exited (idle timeout, crash); end idle ones past the memory cap or no longer held."""
        for key, worker in list(self.workers.items()):
            if not worker.alive and worker.idle:
                self._drop(key)
            elif worker.idle and worker.jobs_run and (worker.rss_mb() > self.memory_cap_mb
                                                      or (self._holders and key.program not in self._holders)):
                self._drop(key)

    def close(self) -> None:
        """End every warm worker now, jobs included (the application quits)."""
        for key, worker in list(self.workers.items()):
            if worker.current is not None:
                worker.current.cancel()
            self._drop(key)

    def _drop(self, key: WarmKey) -> None:
        worker = self.workers.pop(key, None)
        if worker is not None:
            worker.kill()
