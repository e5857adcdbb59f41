"""A worker job on another machine, with `WorkerJob`'s interface: start, fds, poll, cancel, wait, outcome, events.

What a job does there, in one background thread (so `poll()` never blocks; the caller's thread gets the callbacks):

1. asks the server to run the job (one ssh command, through the shared connection); if its cache lacks the worker
   code or one of the job's files, the server says which, and only those are copied, by hash (`put`), with
   `transfer` and `progress` events (bytes, rate), before asking again;
2. runs the job under the agent's supervisor (core/jobs/remote/agent.py): its events, stdout and stderr come back
   multiplexed on ssh's one stdout and are delivered as a local job's are, remote paths turned back into local ones;
3. pulls the job's outputs into the same local folders a local job writes (`out_dir`, and the folders of output
   fields such as decompose's `output`); the server then trims its cache to its cap, oldest first out.

Cancel tells the supervisor, which kills the job's whole process tree on the server; if the connection is gone the
supervisor sees its stdin close and does the same. A connection lost mid-job ends with status `disconnected` and a
message saying so; running the job again reuses what was copied. `uploaded` lists what this job copied.
"""
from __future__ import annotations

import json
import os
import queue
import selectors
import subprocess
import tarfile
import threading
import time
import uuid
from pathlib import Path
from typing import IO, Any

from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import (
    STDERR,
    STDOUT,
    JobOutcome,
    close_pipes,
    load_result,
    stopped_message,
)
from pt2_viewer.core.jobs.protocol import describe_exit, write_json_atomic
from pt2_viewer.core.jobs.remote.content import FolderTooBig, worker_code
from pt2_viewer.core.jobs.remote.paths import Link, PathMap, Plan, local_target, plan
from pt2_viewer.core.jobs.remote.ssh import RemoteError, SshCommand, failure
from pt2_viewer.core.jobs.remote.target import RemoteWorker
from pt2_viewer.core.jobs.spec import JobSpec

DISCONNECTED = "disconnected"  # JobOutcome.status: the connection dropped mid-job (retrying may work)
TRANSFER = "transfer"  # event: {"type", "file", "bytes", "total", "rate"} while a file is copied to the server
REMOTE_STARTED = "remote_started"  # event: the supervisor is up on the server (host, python, code, pids)
CACHE_CAP_ENV = "PT2V_REMOTE_CACHE_MB"
DEFAULT_CACHE_CAP_MB = 20 * 1024
FOLDER_CAP_ENV = "PT2V_REMOTE_FOLDER_CAP_MB"
SEND_CHUNK = 1 << 20
CANCEL_WAIT_S = 3.0
MAX_JSON_REWRITE = 64 * 1024 * 1024

_cache_cap_mb: int | None = None


def set_cache_cap_mb(megabytes: int | None) -> None:
    """The server cache's size cap chosen in Preferences (None: PT2V_REMOTE_CACHE_MB, else 20 GB)."""
    global _cache_cap_mb
    _cache_cap_mb = megabytes


def cache_cap_bytes() -> int:
    env = os.environ.get(CACHE_CAP_ENV, "").strip()
    megabytes = int(env) if env.isdigit() else (_cache_cap_mb or DEFAULT_CACHE_CAP_MB)
    return megabytes * 1024 * 1024


def _last_json(data: bytes) -> dict[str, Any]:
    for line in reversed(data.decode("utf-8", "replace").splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


class _Stopped(Exception):
    """The job was cancelled while it was still copying."""


class RemoteJob:
    """One job on a `RemoteWorker`. Call start(), then poll() whenever `fds()` are readable (and every ~100 ms)."""

    def __init__(self, spec: JobSpec, worker: RemoteWorker, problem: str | None = None) -> None:
        """`spec.python` is not used: the server's Python is `worker.url`."""
        self.spec = spec
        self.job = spec.job
        self.problem = problem  # the worker cannot be used (a malformed URL): start() fails at once, saying this
        self.request = spec.request
        self.out_dir = spec.folder
        self.worker = worker
        self.ssh = SshCommand.for_target(worker)
        self.python = worker.url
        self.timeout_s = spec.time_limit_s
        self.memory_limit_mb = spec.memory_limit_mb
        # the cap on the server's processes together: None the server's default (three quarters of its memory), 0 none
        self.tree_memory_mb = spec.memory_limit_mb
        self.extra_env = dict(spec.env)
        self.cwd = spec.cwd
        self.on_event = spec.on_event
        self.on_output = spec.on_output
        self.on_finished = spec.on_finished
        self.events: list[dict[str, Any]] = []
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self.outcome: JobOutcome | None = None
        self.uploaded: list[str] = []  # the files (and "worker code") this job copied to the server
        self.too_big: FolderTooBig | None = None  # a script's folder past the cap: not started
        self.remote: dict[str, Any] = {}  # the supervisor's hello: pid, worker_pid, marker, python, job_dir
        self.id = uuid.uuid4().hex[:16]
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._wake_r, self._wake_w = -1, -1
        self._wake_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._procs: list[subprocess.Popen[bytes]] = []
        self._run: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._started_at = 0.0

    # --- the WorkerJob interface ----------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None or self.outcome is not None:
            raise RuntimeError("a RemoteJob can be started only once; make a new one to run again")
        self._started_at = time.monotonic()
        if self.problem is not None:
            self._finish(protocol.START_FAILED, self.problem)
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.out_dir / protocol.REQUEST_FILE, self.request.to_json())  # as a local job's has it
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._thread = threading.Thread(target=self._session, name=f"remote-job-{self.id}", daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int | None:
        return self.remote.get("worker_pid")

    @property
    def running(self) -> bool:
        return self._thread is not None and self.outcome is None

    def fds(self) -> list[int]:
        return [self._wake_r] if self.running else []

    def poll(self) -> bool:
        if not self.running:
            return False
        self._drain()
        return self.running

    def wait(self) -> JobOutcome:
        if self._thread is None and self.outcome is None:
            self.start()
        if self.outcome is not None:  # it could not start
            return self.outcome
        with selectors.DefaultSelector() as sel:
            sel.register(self._wake_r, selectors.EVENT_READ)
            while self.poll():
                sel.select(timeout=0.1)
        assert self.outcome is not None
        return self.outcome

    def cancel(self) -> None:
        """Stop the job on the server (its whole process tree) and here; the outcome says 'cancelled'."""
        if not self.running:
            return
        with self._lock:
            self._cancelled = True
            run = self._run
        if run is not None and run.stdin is not None:
            try:
                run.stdin.write(b"cancel\n")
                run.stdin.flush()
            except (OSError, ValueError):  # the job ended meanwhile (its pipes are closed)
                pass
        for proc in list(self._procs):  # a copy under way: stop it (the server drops the partial file)
            if proc is not run:
                proc.kill()
        assert self._thread is not None
        self._thread.join(CANCEL_WAIT_S)
        if self._thread.is_alive():  # the server does not answer: closing our end makes the supervisor end it all
            for proc in list(self._procs):
                proc.kill()
            self._thread.join(1.0)
        self._drain()
        if self.outcome is None:
            self._finish(protocol.CANCELLED, stopped_message(protocol.CANCELLED, None, None))

    # --- delivery in the caller's thread ---------------------------------------------------------------------------
    def _push(self, kind: str, value: Any) -> None:
        self._queue.put((kind, value))
        with self._wake_lock:  # never a write to a closed (and maybe reused) fd number
            if self._wake_w >= 0:
                try:
                    os.write(self._wake_w, b"x")
                except OSError:
                    pass

    def _drain(self) -> None:
        try:
            while self._wake_r >= 0 and os.read(self._wake_r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass
        while self.outcome is None:
            try:
                kind, value = self._queue.get_nowait()
            except queue.Empty:
                return
            if kind == "event":
                self.events.append(value)
                if self.on_event:
                    self.on_event(value)
            elif kind in (STDOUT, STDERR):
                (self.stdout_lines if kind == STDOUT else self.stderr_lines).append(value)
                if self.on_output:
                    self.on_output(kind, value)
            elif kind == "finished":
                self._finish(*value[:2], **value[2])

    def _finish(self, status: str, message: str, **kw: Any) -> None:
        if self.outcome is not None:
            return
        with self._wake_lock:
            for fd in (self._wake_r, self._wake_w):
                if fd >= 0:
                    os.close(fd)
            self._wake_r = self._wake_w = -1
        elapsed = time.monotonic() - self._started_at if self._started_at else 0.0
        self.outcome = JobOutcome(status, message, duration_s=elapsed, out_dir=self.out_dir, **kw)
        if self.on_finished:
            self.on_finished(self.outcome)

    # --- the session, in the background thread ---------------------------------------------------------------------
    def _event(self, event: dict[str, Any]) -> None:
        self._push("event", event)

    def _progress(self, stage: str, message: str, fraction: float | None = None) -> None:
        event: dict[str, Any] = {"type": protocol.PROGRESS, "stage": stage, "message": message}
        if fraction is not None:
            event["fraction"] = max(0.0, min(1.0, fraction))
        self._event(event)

    def _session(self) -> None:
        try:
            result = self._stage_and_run()
        except _Stopped:
            result = (protocol.CANCELLED, stopped_message(protocol.CANCELLED, None, None), {})
        except RemoteError as e:
            status = DISCONNECTED if e.retry else protocol.START_FAILED
            result = (status, e.message, {})
        except FolderTooBig as e:
            self.too_big = e  # the window asks whether to copy it anyway
            result = (protocol.START_FAILED, str(e), {})
        except OSError as e:
            result = (protocol.START_FAILED, f"Could not prepare the job for {self.worker.destination}: "
                      f"{e.strerror or e}.", {})
        finally:
            for proc in self._procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                close_pipes(proc)
        self._push("finished", result)

    def _check_cancel(self) -> None:
        if self._cancelled:
            raise _Stopped()

    def _stage_and_run(self) -> tuple[str, str, dict[str, Any]]:
        self._progress("connect", f"Connecting to {self.worker.destination}")
        code = worker_code()
        folder_cap = os.environ.get(FOLDER_CAP_ENV, "").strip()

        def hashing(path: Path, size: int) -> None:
            if size > 64 * 1024 * 1024:
                self._progress("hash", f"Hashing {path.name} ({size / 2**20:,.0f} MB), once per version of the file")

        job_plan = plan(self.spec.kind, self.request.to_json(), self.out_dir,
                        int(folder_cap) * 2**20 if folder_cap.isdigit() else None, hashing)
        self._check_cancel()
        for _attempt in range(3):  # run at once; copy what the server says it lacks, and run again
            done = self._execute(job_plan)
            if not isinstance(done, dict):
                return done
            if not done.get("code"):
                self._upload("code", code.digest, len(code.data), "the worker code", data=code.data)
            lacking = set(done.get("missing") or [])
            for link in {link.digest: link for link in job_plan.links if link.digest in lacking}.values():
                self._upload("file", link.digest, link.size, link.local.name, link=link)
            self._check_cancel()
        raise RemoteError(f"The server {self.worker.destination} keeps losing the files copied to it (is its scratch "
                          f"folder {self.worker.scratch} full, or emptied meanwhile?).", retry=True)

    def _upload(self, kind: str, digest: str, size: int, label: str, data: bytes | None = None,
                link: Link | None = None) -> None:
        """Copy one file to the server's cache, with `transfer` events; RemoteError if it does not arrive."""
        self._check_cancel()
        proc = self._popen("put", self.worker.scratch, kind, digest, str(size))
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        started, sent, last = time.monotonic(), 0, 0.0

        def report(final: bool = False) -> None:
            elapsed = max(time.monotonic() - started, 1e-6)
            rate = sent / elapsed
            self._event({"type": TRANSFER, "file": label, "bytes": sent, "total": size, "rate": rate})
            self._progress("transfer", f"Copying {label} to {self.worker.host}: {sent / 2**20:,.1f} of "
                           f"{size / 2**20:,.1f} MB at {rate / 2**20:,.1f} MB/s" + (" (done)" if final else ""),
                           sent / size if size else 1.0)

        try:
            source: IO[bytes] | None = open(link.local, "rb") if link is not None else None  # noqa: SIM115
            try:
                view = memoryview(data) if data is not None else None
                while sent < size:
                    self._check_cancel()
                    chunk = (source.read(SEND_CHUNK) if source is not None else
                             bytes(view[sent: sent + SEND_CHUNK]) if view is not None else b"")
                    if not chunk:
                        break
                    proc.stdin.write(chunk)
                    sent += len(chunk)
                    if time.monotonic() - last > 0.25:
                        last = time.monotonic()
                        report()
            finally:
                if source is not None:
                    source.close()
            proc.stdin.close()
        except BrokenPipeError:
            pass
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait()
        self._check_cancel()
        problem = failure(self.worker, proc.returncode or 0, err.decode("utf-8", "replace"))
        if problem is not None:
            raise problem
        answer = _last_json(out)
        if not answer.get("ok"):
            raise RemoteError(f"Copying {label} to {self.worker.destination} failed: "
                              f"{answer.get('error') or err.decode('utf-8', 'replace').strip() or 'no answer'}.",
                              retry=True)
        report(final=True)
        self.uploaded.append(label)

    def _popen(self, *agent_args: str) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(self.ssh.argv(*agent_args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise RemoteError(f"There is no '{self.ssh.base[0]}' program here: install OpenSSH's client.") from None
        self._procs.append(proc)
        return proc

    def _execute(self, job_plan: Plan) -> tuple[str, str, dict[str, Any]] | dict[str, Any]:
        """Run the job on the server: its outcome, or the server's `missing` frame (nothing ran)."""
        spec = {"id": self.id, "code": worker_code().digest, "job": self.job, "request": job_plan.request,
                "links": job_plan.spec_links(), "dirs": list(job_plan.outputs), "out": "out",
                "timeout_s": self.timeout_s, "memory_limit_mb": self.memory_limit_mb,
                "tree_memory_mb": self.tree_memory_mb, "env": self.extra_env, "cwd": None}
        self._progress("start", f"Starting the job on {self.worker.host}")
        with self._lock:
            if self._cancelled:
                raise _Stopped()
            self._run = proc = self._popen("run", self.worker.scratch, json.dumps(spec))
        assert proc.stdout is not None and proc.stderr is not None
        err_lines: list[bytes] = []
        reader = threading.Thread(target=lambda: err_lines.extend(proc.stderr or []), daemon=True)
        reader.start()
        paths: PathMap | None = None
        exit_frame: dict[str, Any] | None = None
        final: dict[str, Any] = {}
        for raw in proc.stdout:
            try:
                frame = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(frame, dict):
                continue
            channel = frame.get("c")
            if channel == "missing":
                proc.wait()
                with self._lock:
                    self._run = None
                return frame
            if channel == "hello":
                self.remote = frame
                paths = PathMap(str(frame.get("job_dir")), job_plan, self.out_dir)
                self._event({"type": REMOTE_STARTED, "host": self.worker.host, "python": frame.get("python"),
                             "code": frame.get("code"), "pid": frame.get("pid"), "worker_pid": frame.get("worker_pid")})
            elif channel == "exit":
                exit_frame = frame
            elif channel in ("e", "o", "r") and paths is not None:
                line = str(frame.get("d", ""))
                if channel == "e":
                    event = protocol.decode_event(line)
                    event = paths.data(event)
                    if event.get("type") in (protocol.DONE, protocol.ERROR):
                        final = event
                    self._event(event)
                else:
                    self._push(STDOUT if channel == "o" else STDERR, paths.text(line.rstrip("\r")))
        proc.wait()
        reader.join(2.0)
        stderr = b"".join(err_lines).decode("utf-8", "replace")
        if exit_frame is None:
            if self._cancelled:
                raise _Stopped()
            problem = failure(self.worker, proc.returncode or 0, stderr)
            if problem is not None and not problem.retry:
                raise problem
            why = (problem.message if problem is not None else
                   stderr.strip().splitlines()[-1] if stderr.strip() else f"ssh exited with {proc.returncode}")
            raise RemoteError(f"The connection to {self.worker.destination} was lost during the job ({why}). "
                              "The job on the server was stopped with everything it started; run it again (what "
                              "was already copied is not copied again).", retry=True)
        reason = exit_frame.get("reason")
        rc = exit_frame.get("rc")
        if reason:
            status = protocol.CANCELLED if reason == "disconnected" else str(reason)
            cap = exit_frame.get("tree_memory_mb") if isinstance(exit_frame.get("tree_memory_mb"), int) else None
            return status, stopped_message(status, self.timeout_s, cap), {"returncode": rc}
        assert paths is not None
        self._progress("fetch", f"Copying the results from {self.worker.host}")
        self._pull(job_plan, paths)  # and the server's cache trimmed to its cap
        host = f" (on {self.worker.host})"
        if final.get("type") == protocol.DONE and rc == 0:
            return protocol.OK, "Finished.", {"returncode": rc, "result": load_result(self.out_dir)}
        if final.get("type") == protocol.ERROR:
            return (protocol.FAILED, f"The job failed: {final.get('message', 'no message')}",
                    {"returncode": rc, "error": final.get("message"), "error_traceback": final.get("traceback")})
        return protocol.CRASHED, describe_exit(rc) + host, {"returncode": rc}

    def _pull(self, job_plan: Plan, paths: PathMap) -> None:
        """The job's output folders, as a tar stream, into the local folders they stand for."""
        proc = self._popen("pull", self.worker.scratch, self.id, str(cache_cap_bytes()), *job_plan.pulled())
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdin.close()
        written: list[Path] = []
        try:
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                for member in tar:
                    target = local_target(member.name, job_plan, self.out_dir)
                    if target is None or not member.isfile() or target.name == protocol.REQUEST_FILE:
                        continue
                    source = tar.extractfile(member)
                    if source is None:
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    tmp = target.with_name(f".{target.name}.part-{self.id}")
                    with open(tmp, "wb") as f:
                        while chunk := source.read(SEND_CHUNK):
                            f.write(chunk)
                    os.replace(tmp, target)
                    written.append(target)
        except tarfile.TarError as e:
            raise RemoteError(f"The results from {self.worker.destination} did not arrive whole ({e}); run the "
                              "job again.", retry=True) from None
        stderr = proc.stderr.read() if proc.stderr is not None else b""
        proc.wait()
        problem = failure(self.worker, proc.returncode or 0, stderr.decode("utf-8", "replace"))
        if problem is not None:
            raise problem
        for path in written:  # result.json, report.json, mappings: remote paths made local
            if path.suffix == ".json" and path.stat().st_size <= MAX_JSON_REWRITE:
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                write_json_atomic(path, paths.data(data))
