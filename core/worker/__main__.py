"""Entry point of a worker process: `python -m pt2_viewer.core.worker JOB --request REQUEST.json --out DIR`.

It imports the module that JOB's kind names (core/jobs/kinds.py), reads the request through the kind's schema, hands
it to the module's `run_job` (a `TypedJob` of that kind, core/jobs/typed_job.py), writes the result object it
returns through the kind's result schema to DIR/result.json and emits `done`, or emits `error` with the message and
traceback if the job raised. Events go to the file descriptor in `PT2V_EVENTS_FD` (stderr when it is not set, for
running a job by hand). `--max-memory-mb` caps the address space with resource.setrlimit before any job code runs, so
a script that eats memory fails inside this process instead of taking the machine down. The client
(core/jobs/client.py) starts this in its own process group.

`python -m pt2_viewer.core.worker serve [--max-memory-mb N] [--idle-timeout S]` is the warm worker
(core/jobs/warm.py): it imports torch and the jobs whose kind says to import them first (`Warm.PREIMPORTED`), then
runs jobs one after another, those a warm worker may serve (`JobKind.warm`), each asked for by a JSON line on its
stdin (`{"id", "job", "request", "out"}`), with the same events (each with `job_id`), result.json and `done`/`error`
as a one-shot worker. A `ProgramCache` takes the place of `load_program`, so a job on
a program an earlier job loaded does not load it again (core/jobs/program_cache.py). It exits when its stdin closes
(the client went away, even mid-job), after `--idle-timeout` seconds without a job, or after a job raised.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import queue
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.errors import failed_result
from pt2_viewer.core.jobs.kinds import JOB_KINDS, JobKind, Warm, job_kind
from pt2_viewer.core.jobs.program_cache import ProgramCache, install
from pt2_viewer.core.jobs.protocol import (
    DONE,
    ERROR,
    EVENTS_FD_ENV,
    RESULT_FILE,
    STARTED,
    encode_event,
    write_json_atomic,
)
from pt2_viewer.core.jobs.python_env import missing_torch_message
from pt2_viewer.core.jobs.schemas.base import SchemaError
from pt2_viewer.core.jobs.schemas.failure import Failure
from pt2_viewer.core.jobs.schemas.warm import WarmJobLine
from pt2_viewer.core.jobs.typed_job import TypedJob


class EventWriter:
    """Writes whole JSON lines to the events pipe; thread-safe, and quiet if the reader has gone away."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        data = encode_event(event)
        with self._lock:
            if self.fd is None:
                sys.stderr.write("[pt2v-event] " + data.decode("utf-8"))
                sys.stderr.flush()
                return
            try:
                while data:
                    data = data[os.write(self.fd, data):]
            except OSError:  # the client closed its end (it was cancelled or died): nothing left to tell
                self.fd = None


def open_events() -> EventWriter:
    """Take the events fd from the environment and hide it from the script's own child processes."""
    value = os.environ.pop(EVENTS_FD_ENV, None)
    if value is None:
        return EventWriter(None)
    fd = int(value)
    os.set_inheritable(fd, False)
    return EventWriter(fd)


def limit_memory(megabytes: int) -> None:
    import resource

    limit = megabytes * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


SERVE = "serve"
DEFAULT_IDLE_TIMEOUT_S = 600.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m pt2_viewer.core.worker", description="Run one PT2 Viewer worker job.")
    p.add_argument("job", help=f"job name: one of {', '.join(sorted(kind.name for kind in JOB_KINDS))}")
    p.add_argument("--request", required=True, type=Path, help="JSON file with the job's request")
    p.add_argument("--out", required=True, type=Path, help="folder for the job's results")
    p.add_argument("--max-memory-mb", type=int, default=None, help="address-space limit for this process")
    return p.parse_args(argv)


def load_job(name: str) -> TypedJob[Any, Any]:
    """The `run_job` of the job named `name`, from the module its kind names (imported only when asked for: each
    pulls in torch). The worker is the top of the child process: the domain modules that hold the jobs import only
    what lies below them (pt2_viewer.core.jobs), never the worker."""
    kind = job_kind(name)
    run_job = getattr(importlib.import_module(kind.module), "run_job", None)
    if not isinstance(run_job, TypedJob) or run_job.kind != kind:
        raise ValueError(f"{kind.module} has no run_job = TypedJob(run, ...) for the job '{name}' "
                         "(core/jobs/kinds.py)")
    return run_job


def read_request(path: Path) -> dict[str, Any]:
    try:
        request = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"cannot read the request file {path}: {e.strerror}") from None
    except ValueError as e:
        raise ValueError(f"the request file {path} is not valid JSON: {e}") from None
    if not isinstance(request, dict):
        raise ValueError(f"the request file {path} must hold a JSON object, not {type(request).__name__}")
    return request


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [SERVE]:
        code = serve(parse_serve_args(argv[1:]))
        _flush_std()
        # At once, as at the end of its stdin: the thread reading it holds stdin's lock, and the interpreter's
        # shutdown would wait for that lock and abort (SIGABRT, "could not acquire lock ... at interpreter shutdown").
        os._exit(code)
    args = parse_args(argv)
    emit = open_events()
    emit({"type": STARTED, "job": args.job, "pid": os.getpid()})
    try:
        if args.max_memory_mb:
            limit_memory(args.max_memory_mb)
        run_job = load_job(args.job)
        request = read_request(args.request)
        out = args.out.resolve()
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / RESULT_FILE, run_checked(run_job, request, out, emit))
    except BaseException as e:  # the job failed: say so on the events pipe, then exit non-zero
        emit({"type": ERROR, "message": _error_message(e, args.max_memory_mb), "traceback": traceback.format_exc()})
        _flush_std()
        return 1
    emit({"type": DONE, "result": RESULT_FILE})
    _flush_std()
    return 0


def run_checked(run_job: TypedJob[Any, Any], request: dict[str, Any], out: Path,
                emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """`run_job` on the request read through its kind's schema, and its result written through the kind's result
    schema: a malformed request is the job's failure of kind `request` (or, for a job that reports none, an error);
    a result that does not fit its schema is a bug, raised."""
    kind: JobKind[Any, Any] = run_job.kind
    try:
        typed_request = kind.request.from_json(request)
    except SchemaError as e:
        if not kind.reports_failures:
            raise ValueError(f"the request is malformed: {e}") from None
        failure = Failure("request", f"The request is malformed: {e}.", "Send the fields docs/jobs.md describes.")
        emit({"type": "job_failed", **failure.to_json()})
        result = failed_result(failure)
    else:
        result = run_job.typed(typed_request, out, emit).to_json()
    as_written = json.loads(json.dumps(result, default=str))  # what result.json holds: paths and the like as text
    return kind.result.from_json(as_written).to_json()


def _error_message(e: BaseException, max_memory_mb: int | None) -> str:
    message = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    if isinstance(e, MemoryError):
        message = "The job ran out of memory" + (f" (limit {max_memory_mb} MB)" if max_memory_mb else "")
    if isinstance(e, ModuleNotFoundError) and e.name == "torch":  # the chosen worker Python lacks torch
        message = missing_torch_message(sys.executable)
    return message


# --- the warm worker ------------------------------------------------------------------------------------------------
def parse_serve_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m pt2_viewer.core.worker serve",
                                description="Run PT2 Viewer jobs one after another, keeping loaded programs.")
    p.add_argument("--max-memory-mb", type=int, default=None, help="address-space limit for this process")
    p.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT_S,
                   help="exit after this many seconds without a job (0: never)")
    return p.parse_args(argv)


def _read_requests(stream: Any, requests: queue.Queue[dict[str, Any]]) -> None:
    """Queue each JSON line from the client; at end of file the client is gone: end the process at once."""
    for line in stream:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            requests.put(item)
    _flush_std()
    os._exit(0)


def serve(args: argparse.Namespace) -> int:
    emit = open_events()
    emit({"type": STARTED, "job": SERVE, "pid": os.getpid()})
    requests: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=_read_requests, args=(sys.stdin.buffer, requests), daemon=True).start()
    cache = ProgramCache()
    install(cache)
    try:
        if args.max_memory_mb:
            limit_memory(args.max_memory_mb)
        import torch.export  # noqa: F401  (seconds: done before the first job is asked for the jobs import torch inside)

        for kind in JOB_KINDS:
            if kind.warm is Warm.PREIMPORTED:
                load_job(kind.name)
    except BaseException as e:
        emit({"type": ERROR, "message": _error_message(e, args.max_memory_mb), "traceback": traceback.format_exc()})
        _flush_std()
        return 1
    emit({"type": "ready", "pid": os.getpid()})
    while True:
        try:
            item = requests.get(timeout=args.idle_timeout or None)
        except queue.Empty:
            return 0
        if not serve_one(item, emit, cache, args.max_memory_mb):
            return 1


def serve_one(item: dict[str, Any], emit: Callable[[dict[str, Any]], None], cache: Any,
              max_memory_mb: int | None) -> bool:
    """Run one job asked for on stdin; False when it raised (the process's state is unknown: end it)."""

    job_id = item.get("id")

    def job_emit(event: dict[str, Any]) -> None:
        emit({**event, "job_id": job_id})

    name = str(item.get("job"))
    job_emit({"type": STARTED, "job": name, "pid": os.getpid(), "warm": True})
    cache.emit = job_emit
    try:
        line = WarmJobLine.from_json(item)
        if job_kind(name).warm is Warm.NEVER:
            raise ValueError(f"the job '{name}' runs only in a fresh worker")
        run_job = load_job(name)
        install(cache, sys.modules[run_job.kind.module])
        request = read_request(Path(line.request))
        out = Path(line.out).resolve()
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / RESULT_FILE, run_checked(run_job, request, out, job_emit))
    except BaseException as e:
        job_emit({"type": ERROR, "message": _error_message(e, max_memory_mb), "traceback": traceback.format_exc()})
        _flush_std()
        return False
    finally:
        cache.emit = None
    cache.after_job()
    _flush_std()
    job_emit({"type": DONE, "result": RESULT_FILE})
    return True


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    sys.exit(main())
