"""Start a worker job in a child process and follow it, without Qt and without threads.

`WorkerJob(JobSpec(job, request, out_dir))` starts `python -m pt2_viewer.core.worker JOB --request out_dir/request.json
--out out_dir` in its own process group (so Cancel kills the job and anything it started, at once) and reads three
pipes: JSON events, the script's stdout and its stderr. Nothing blocks: `poll()` reads what is there, calls the
callbacks, checks the time limit and notices the exit. A GUI drives it with a QSocketNotifier on each of `fds()` plus
a short QTimer, both calling `poll()`; a command line calls `wait()`. How the job ended (`JobOutcome`) is always said
in words, whether it finished, failed, crashed (signal, os._exit), timed out, or was cancelled. See docs/worker.md.
A job on an open program can run in a warm worker instead (core/jobs/warm.py: the same interface, no reload).
"""
from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs import process_tree, protocol
from pt2_viewer.core.jobs.outcome import JobOutcome as JobOutcome  # where the jobs' users read it
from pt2_viewer.core.jobs.protocol import describe_exit, write_json_atomic
from pt2_viewer.core.jobs.python_env import HOW_TO_FIX, choose_worker_python, worker_environment
from pt2_viewer.core.jobs.schemas.base import Schema
from pt2_viewer.core.jobs.spec import DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S  # where the command lines read it
from pt2_viewer.core.jobs.spec import JobSpec

STDOUT = "stdout"
STDERR = "stderr"
EVENTS = "events"
READ_CHUNK = 65536
MAX_LINE = 1 << 20  # a "line" longer than this is delivered in pieces
MEMORY_CHECK_S = 0.5  # how often the job's processes' memory is summed


def default_memory_mb() -> int:
    """Three quarters of the machine's memory: the default cap on a job's processes together."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return 8192
    return max(2048, total * 3 // 4)

EventCallback = Callable[[dict[str, Any]], None]
OutputCallback = Callable[[str, str], None]


@dataclass
class _Stream:
    name: str
    fd: int
    buffer: bytearray = field(default_factory=bytearray)


class PipeReader:
    """Non-blocking line reader over named pipes (events, stdout, stderr): `read()` hands each whole line to
    `deliver(name, line)`; a pipe at end of file delivers its last partial line and is closed."""

    def __init__(self, deliver: Callable[[str, bytes], None]) -> None:
        self.deliver = deliver
        self.streams: dict[int, _Stream] = {}

    def add(self, name: str, fd: int) -> None:
        os.set_blocking(fd, False)
        self.streams[fd] = _Stream(name, fd)

    def fds(self) -> list[int]:
        return list(self.streams)

    def read(self) -> None:
        for fd, stream in list(self.streams.items()):
            while True:
                try:
                    chunk = os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    break
                except OSError:
                    chunk = b""
                if not chunk:
                    self.close(stream)
                    break
                stream.buffer += chunk
                self._lines(stream)

    def close_all(self) -> None:
        for stream in list(self.streams.values()):
            self.close(stream)

    def close(self, stream: _Stream) -> None:
        self._lines(stream, final=True)
        self.streams.pop(stream.fd, None)
        try:
            os.close(stream.fd)
        except OSError:
            pass

    def _lines(self, stream: _Stream, final: bool = False) -> None:
        while True:
            nl = stream.buffer.find(b"\n")
            if nl < 0:
                if len(stream.buffer) >= MAX_LINE or (final and stream.buffer):
                    line, stream.buffer = bytes(stream.buffer), bytearray()
                    self.deliver(stream.name, line)
                return
            line = bytes(stream.buffer[:nl])
            del stream.buffer[: nl + 1]
            self.deliver(stream.name, line)


def close_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Close the process's ends of its standard pipes (the readers' fds are closed by PipeReader)."""
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass


def load_result(out_dir: Path) -> dict[str, Any] | None:
    """OUT/result.json as a dict, or None when it is missing or not an object."""
    try:
        data = json.loads((out_dir / protocol.RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def stopped_message(reason: str, timeout_s: float | None, tree_memory_mb: int | None) -> str:
    """In words, why the client stopped a job (CANCELLED, TIMED_OUT or OUT_OF_MEMORY)."""
    if reason == protocol.CANCELLED:
        return "Cancelled: the worker and everything it started were stopped."
    if reason == protocol.TIMED_OUT:
        return (f"Stopped after the time limit of {timeout_s or 0:g} s: the script was still running (an endless "
                "loop, or work too big for the limit).")
    return (f"Stopped: the job's processes used more than the memory limit of {tree_memory_mb or 0:,} MB (raise it "
            "with --max-memory-mb, or give the job less work).")


def start_worker_process(command: list[str], *, env: dict[str, str], cwd: str | None, pass_fds: tuple[int, ...],
                         stdin: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """The one place a worker process is started on this machine: `command` (`PYTHON -m pt2_viewer.core.worker ...`)
    in its own session, so that cancelling kills its whole process group; stdin closed (a warm worker's is a pipe
    that its jobs come on), stdout and stderr piped, the events pipe's write end (`pass_fds`) inherited. OSError
    when it cannot start (the Python does not exist...).

    A worker elsewhere (core/jobs/remote/) starts its process its own way and keeps `WorkerJob`'s interface
    (`core.jobs.job.Job`)."""
    return subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            pass_fds=pass_fds, env=env, cwd=cwd, start_new_session=True)


class WorkerJob:
    """One worker job. Call start(), then poll() whenever `fds()` are readable (and every ~100 ms), or wait()."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec
        self.job = spec.job
        self.request = spec.request
        self.out_dir = spec.folder
        # Limits: None is the default (an hour; three quarters of the memory), 0 is none.
        self.timeout_s = spec.time_limit_s
        self.memory_limit_mb = spec.memory_limit_mb  # also the worker's address-space limit, when given
        self.tree_memory_mb = default_memory_mb() if spec.memory_limit_mb is None else (spec.memory_limit_mb or None)
        self.marker = uuid.uuid4().hex  # in the worker's environment, inherited by all it starts (process_tree)
        self._tmp: Path | None = None  # the worker's TMPDIR, removed with the job (torch litters it)
        self._next_memory_check = 0.0
        # PT2V_WORKER_PYTHON, else the Preferences choice, else this Python (core/jobs/python_env.py)
        self.python = spec.python or choose_worker_python().path
        self.extra_env = dict(spec.env)
        self.cwd = spec.cwd
        self.on_event = spec.on_event
        self.on_output = spec.on_output
        self.on_finished = spec.on_finished
        self.events: list[dict[str, Any]] = []
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self.outcome: JobOutcome | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._pipes = PipeReader(self._deliver)
        self._started_at = 0.0
        self._deadline: float | None = None
        self._stop_reason: str | None = None  # CANCELLED or TIMED_OUT once we killed it
        self._final: dict[str, Any] | None = None  # the `done` or `error` event

    # --- life cycle ---------------------------------------------------------------------------------------------
    def command(self) -> list[str]:
        cmd = [self.python, "-m", "pt2_viewer.core.worker", self.job,
               "--request", str(self.out_dir / protocol.REQUEST_FILE), "--out", str(self.out_dir)]
        if self.memory_limit_mb:
            cmd += ["--max-memory-mb", str(int(self.memory_limit_mb))]
        return cmd

    def start(self) -> None:
        if self._proc is not None or self.outcome is not None:
            raise RuntimeError("a WorkerJob can be started only once; make a new one to run again")
        self._started_at = time.monotonic()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.out_dir / protocol.REQUEST_FILE, self.request.to_json())  # the worker reads it
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env.update(self.extra_env)
        env = worker_environment(env)  # core on PYTHONPATH; a bundle's LD_LIBRARY_PATH put back
        env[protocol.EVENTS_FD_ENV] = str(write_fd)
        env[process_tree.MARKER_ENV] = self.marker
        self._tmp = Path(tempfile.mkdtemp(prefix="pt2v-job-tmp-"))
        env["TMPDIR"] = str(self._tmp)
        env["PYTHONUNBUFFERED"] = "1"  # the script's prints reach the log panel as they happen
        try:
            self._proc = start_worker_process(self.command(), env=env, cwd=self.cwd, pass_fds=(write_fd,))
        except OSError as e:
            os.close(read_fd)
            os.close(write_fd)
            self._remove_tmp()
            choice = choose_worker_python()  # say where the choice came from when it is the one in force
            which = choice.describe() if choice.path == self.python else self.python
            self._finish(protocol.START_FAILED, f"Could not start the worker's Python {which}: "
                         f"{e.strerror or e}. {HOW_TO_FIX}")
            return
        os.close(write_fd)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        for name, fd in ((EVENTS, read_fd), (STDOUT, self._proc.stdout.fileno()),
                         (STDERR, self._proc.stderr.fileno())):
            self._pipes.add(name, fd)
        if self.timeout_s is not None:
            self._deadline = self._started_at + self.timeout_s

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self.outcome is None

    def fds(self) -> list[int]:
        """The file descriptors still open for reading; watch them and call poll() when one is readable."""
        return self._pipes.fds()

    def poll(self) -> bool:
        """Read what is available, deliver it, enforce the time limit, notice the exit. True while running."""
        if not self.running:
            return False
        self._read_available()
        if self._deadline is not None and time.monotonic() > self._deadline:
            self._kill(protocol.TIMED_OUT)
            return False
        if self.tree_memory_mb and time.monotonic() >= self._next_memory_check:
            self._next_memory_check = time.monotonic() + MEMORY_CHECK_S
            if process_tree.usage(self.marker).rss_bytes > self.tree_memory_mb * 1024 * 1024:
                self._kill(protocol.OUT_OF_MEMORY)
                return False
        assert self._proc is not None
        if self._proc.poll() is not None:
            self._read_available()  # what it wrote before exiting is still in the pipes
            self._conclude()
            return False
        return True

    def wait(self) -> JobOutcome:
        """Block until the job ends (timeout_s still applies). Callbacks run in this thread."""
        if self._proc is None and self.outcome is None:
            self.start()
        with selectors.DefaultSelector() as sel:
            watched: set[int] = set()
            while self.poll():
                for fd in watched - set(self.fds()):
                    sel.unregister(fd)
                    watched.discard(fd)
                for fd in set(self.fds()) - watched:
                    sel.register(fd, selectors.EVENT_READ)
                    watched.add(fd)
                if watched:
                    sel.select(timeout=0.1)
                else:  # all pipes closed, the process is still exiting
                    assert self._proc is not None
                    try:
                        self._proc.wait(timeout=0.1)
                    except subprocess.TimeoutExpired:
                        pass
        assert self.outcome is not None
        return self.outcome

    def cancel(self) -> None:
        """Kill the job and every process it started (its process group) now; the outcome says 'cancelled'."""
        if self.running:
            self._kill(protocol.CANCELLED)

    # --- internals ----------------------------------------------------------------------------------------------
    def _kill(self, reason: str) -> None:
        assert self._proc is not None
        self._stop_reason = reason
        self._kill_group()
        try:
            self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:  # unkillable (D state); say so rather than hang the caller
            pass
        self._read_available()
        self._conclude()

    def _kill_group(self) -> None:
        """The worker's process group, then whatever carries its marker (daemons that left the group)."""
        assert self._proc is not None
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process_tree.kill_marked(self.marker)

    def _remove_tmp(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _read_available(self) -> None:
        self._pipes.read()

    def _deliver(self, name: str, line: bytes) -> None:
        if name == EVENTS:
            event = protocol.decode_event(line)
            self.events.append(event)
            if event["type"] in (protocol.DONE, protocol.ERROR):
                self._final = event
            if self.on_event:
                self.on_event(event)
            return
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        (self.stdout_lines if name == STDOUT else self.stderr_lines).append(text)
        if self.on_output:
            self.on_output(name, text)

    def _conclude(self) -> None:
        assert self._proc is not None
        self._kill_group()  # children the script left behind must not outlive the job
        self._pipes.close_all()
        close_pipes(self._proc)
        self._remove_tmp()
        rc = self._proc.returncode
        final = self._final or {}
        if self._stop_reason is not None:
            self._finish(self._stop_reason, stopped_message(self._stop_reason, self.timeout_s, self.tree_memory_mb),
                         rc)
        elif final.get("type") == protocol.DONE and rc == 0:
            self._finish(protocol.OK, "Finished.", rc, result=self._load_result())
        elif final.get("type") == protocol.ERROR:
            self._finish(protocol.FAILED, f"The job failed: {final.get('message', 'no message')}", rc,
                         error=final.get("message"), error_traceback=final.get("traceback"))
        elif final.get("type") == protocol.DONE:
            self._finish(protocol.FAILED, describe_exit(rc) + " (after the job had finished)", rc,
                         result=self._load_result())
        else:
            message = describe_exit(rc)
            if self.memory_limit_mb and rc is not None and rc < 0:
                message += f" The memory limit was {self.memory_limit_mb} MB."
            self._finish(protocol.CRASHED, message, rc)

    def _load_result(self) -> dict[str, Any] | None:
        return load_result(self.out_dir)

    def _finish(self, status: str, message: str, returncode: int | None = None, **kw: Any) -> None:
        elapsed = time.monotonic() - self._started_at if self._started_at else 0.0
        self.outcome = JobOutcome(status, message, returncode, duration_s=elapsed, out_dir=self.out_dir, **kw)
        if self.on_finished:
            self.on_finished(self.outcome)


def run_job(job: str, request: Schema, out_dir: str | os.PathLike[str], **options: Any) -> tuple[
        WorkerJob, JobOutcome]:
    """Run a job to the end in this thread (command lines, tests); returns the job (events, output) and outcome.
    `options` are JobSpec's."""
    worker = WorkerJob(JobSpec(job, request, out_dir, **options))
    worker.start()
    return worker, worker.wait()
