"""What the `decompose`, `run` and `numerics` command lines share: running the job in the worker with progress on
stderr, and printing a failed job's message and hint.

Every torch job runs in the worker process the window uses (core/jobs/client.py): `python -m pt2_viewer.core.worker
JOB` on the Python that PT2V_WORKER_PYTHON, else the window's Preferences, choose (core/jobs/python_env.py), with a
time limit (`--timeout`), a memory limit on its whole process tree (`--max-memory-mb`), and the process group killed
when the command ends, fails or is interrupted (Ctrl+C, SIGTERM, SIGHUP). The command line's own Python needs no
torch. A worker that cannot start, crashes or is stopped gives a failed result like any job's (`error.kind`
`start_failed`, `crashed`, `timed_out`, `out_of_memory`, `cancelled`, or `internal` when the job raised).

The file is checked before torch sees it (core/jobs/archive_check.py); `--trust` lets a file the user trusts run the
code it holds (pickled objects, imports); `--allow-import MODULE` allows one more installed module to be imported
(those of transformers, torchvision, torchao, ... are by default: core/jobs/import_policy.py), `--allow-native` an
AOTInductor package's compiled code.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import DEFAULT_TIMEOUT_S, JobOutcome
from pt2_viewer.core.jobs.remote.any_worker import worker_job
from pt2_viewer.core.jobs.schemas.base import Schema, SchemaError
from pt2_viewer.core.jobs.schemas.failure import Failure, JobResult, saying_where_the_log_is
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.jobs.typed_job import failed
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.util.files import write_atomically

TRUST_HELP = ("load the file even if it holds code (pickled objects, modules to import): only for files you trust; "
              "without it such a file is refused, saying what it holds")


def add_program_arguments(parser: argparse.ArgumentParser) -> None:
    """What every command that loads a program with torch takes: which program, a file to import first, --trust
    and -q."""
    parser.add_argument("--program", help="which program of the archive (default: 'model')")
    parser.add_argument("--import", dest="preload", type=Path, metavar="FILE.py",
                        help="a Python file to import first, e.g. the definition of a custom op")
    parser.add_argument("--trust", action="store_true", help=TRUST_HELP)
    parser.add_argument("--allow-import", dest="allow_import", action="append", default=[], metavar="MODULE",
                        help="let the program import this installed module (and its submodules) although it is not "
                             "one of the libraries allowed by default (transformers, torchvision, torchao, ...); "
                             "repeatable")
    parser.add_argument("--allow-native", action="store_true",
                        help="let an AOTInductor package's compiled code (a shared library) be loaded and run")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def trust_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The request's three kinds of trust from the command line: --trust (all), --allow-import, --allow-native."""
    return {"trust": bool(args.trust), "allow_imports": list(getattr(args, "allow_import", None) or []),
            "allow_native": bool(getattr(args, "allow_native", False))}


WORKER_HELP = ("where the job runs: a Python here (PATH) or on another machine, "
               "ssh://[user@]host[:port]/ABS/PATH/python (reached with your ssh; PT2V_SSH_COMMAND replaces it); "
               "default: PT2V_WORKER, then PT2V_WORKER_PYTHON, then the window's Preferences, then this Python")


def add_worker_arguments(parser: argparse.ArgumentParser, what: str = "the job") -> None:
    """The worker (--worker: local or over SSH) and its limits, as every command that runs a worker job takes them."""
    parser.add_argument("--worker", default=None, metavar="PYTHON|ssh://[USER@]HOST[:PORT]/PATH/python",
                        help=WORKER_HELP)
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help=f"stop {what} after this many seconds (default {DEFAULT_TIMEOUT_S:g}; 0: no limit)")
    parser.add_argument("--max-memory-mb", type=int, default=None, metavar="MB",
                        help="limit the worker's memory, its children's included (torch alone takes about 750 MB; "
                        "use 1500 or more; default: three quarters of this machine's memory; 0: no limit)")


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP: end the job like Ctrl+C does, so the worker does not outlive the command."""


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Interrupted` (a KeyboardInterrupt) while the job runs."""
    def interrupt(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)

    saved = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


R = TypeVar("R", bound=JobResult)


def run_in_worker(job: str, request: Schema, out: Path, args: argparse.Namespace, result_type: type[R]) -> R:
    """Run `job` (its request: a dataclass of core/jobs/schemas/) in the worker to its end and return its result,
    read through `result_type`; a worker that could not finish (or Ctrl+C) gives a failed result saying why, never a
    traceback. Progress events go to stderr unless -q or --json, the worker's own output (torch's warnings) unless
    -q."""

    quiet = bool(getattr(args, "quiet", False))
    progress = stderr_progress(quiet or bool(getattr(args, "json", False)))

    def echo(_stream: str, line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    spec = JobSpec(job, request, out, timeout_s=getattr(args, "timeout", None),
                   memory_limit_mb=getattr(args, "max_memory_mb", None), on_event=progress, on_output=echo)
    worker = worker_job(spec, getattr(args, "worker", None))
    try:
        with signals_interrupt():
            outcome = worker.wait()
    except KeyboardInterrupt:
        worker.cancel()
        return failed(result_type, Failure(protocol.CANCELLED, "Cancelled: the worker and everything it started "
                                           "were stopped."))
    finally:
        worker.cancel()  # whatever ends this command ends the worker's process tree (a no-op once it has ended)
    return outcome_result(outcome, result_type)


def outcome_result(outcome: JobOutcome, result_type: type[R]) -> R:
    """The job's result.json read through `result_type`, or for a worker that did not finish, a failed result of
    that type."""
    if outcome.status == protocol.OK and outcome.result is not None:
        try:
            return result_type.from_json(outcome.result)
        except SchemaError as e:  # the worker writes through the same schema: a bug
            return failed(result_type, Failure("internal", f"The job's result is malformed: {e}",
                                               "Please report it with the file that caused it."))
    if outcome.status == protocol.FAILED and outcome.error is not None:  # the job raised: a bug, or torch failing
        return failed(result_type, Failure("internal", f"The job failed unexpectedly: {outcome.error}",
                                           "Please report it with the file that caused it.",
                                           outcome.error_traceback or ""))
    hints = {protocol.TIMED_OUT: "Raise the limit with --timeout (0: none), or give the job less work.",
             protocol.OUT_OF_MEMORY: "Raise the limit with --max-memory-mb, or give the job less work.",
             protocol.CRASHED: "The log has what the worker printed before it ended."}
    status = outcome.status if outcome.status != protocol.OK else protocol.FAILED
    return failed(result_type, Failure(status, outcome.message, hints.get(status, ""), outcome.error_traceback or ""))


def stderr_progress(quiet: bool) -> Callable[[dict[str, Any]], None]:
    def emit(event: dict[str, Any]) -> None:
        if not quiet and event.get("type") == "progress":
            print(f"[{event.get('stage')}] {event.get('message')}", file=sys.stderr, flush=True)

    return emit


def report_failure(failure: Failure | None) -> int:
    """Print a failed job's error to stderr; the exit status by the rule of core/cli/exit_status.py: 1 for the
    file's or program's failure, 2 for a bad request or a worker that did not finish, 130 when cancelled. Where the
    words send the user to "the log", they say where it is: the file its detail (torch's full message) was written
    to, kept after the command ends, else the worker's output printed above."""
    message, hint = (failure.message, failure.hint) if failure is not None else ("the job failed", "")
    if failure is not None and saying_where_the_log_is(failure.text(), "?") != failure.text():
        where = log_where(failure)
        message, hint = saying_where_the_log_is(message, where), saying_where_the_log_is(hint, where)
    print(f"error: {_printable(message)}", file=sys.stderr)
    if hint:
        print(f"  {_printable(hint)}", file=sys.stderr)
    return exit_status.for_failure_kind(failure.kind if failure is not None else "")


def log_where(failure: Failure) -> str:
    """Where "the log" a failure's hint names is, from the command line: `at PATH`, the detail written to a file of
    the temp folder that outlives the command (the job's folder does not), else the worker's output above."""
    if not failure.detail:
        return "above (the worker's output; -q hides it)"
    name = f"pt2-viewer-{failure.kind or 'job'}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        path = write_atomically(temp_dirs.root() / name, failure.detail + "\n")
    except OSError:
        return "above (the worker's output; -q hides it)"
    return f"at {path}"


def _printable(text: str) -> str:
    """Text for a terminal: control characters from a hostile file's names shown as '?', never sent raw."""
    return "".join(c if c.isprintable() or c == "\n" else "?" for c in text)


def finish(result: R, as_json: bool, readable: Callable[[R], str]) -> int:
    """Print the result (one JSON object as result.json holds it, or `readable(result)`) and the failure if any;
    return the exit status."""
    if as_json:  # its JSON, written here where it leaves for the terminal: result.json's keys in order, but `log`
        print(json.dumps({k: v for k, v in result.to_json().items() if k != "log"}, indent=1))
    if not result.ok:
        return report_failure(result.error)
    if not as_json:
        print(readable(result))
    return 0


@contextmanager
def job_folder(kind: str) -> Iterator[Path]:
    """The job's own temporary folder (its request.json, result.json and scratch files), removed when the command
    ends: a user's folder receives only the files they asked for (`-o OUT.pt2`), never the job's bookkeeping."""

    folder = temp_dirs.new_dir(kind)
    try:
        yield folder
    finally:
        temp_dirs.remove(folder)


def deliver(job_dir: Path, destination: Path) -> list[str]:
    """Copy the files a job made for the user (every file directly in `job_dir` but its request.json and
    result.json; not its scratch folders) into `destination`, each written atomically; their names."""
    import shutil

    skip = {protocol.REQUEST_FILE, protocol.RESULT_FILE}
    chosen = sorted(p.name for p in job_dir.iterdir() if p.is_file() and p.name not in skip)
    for name in chosen:
        source = job_dir / name
        write_atomically(destination / name, partial(shutil.copyfile, source))
    return chosen


def run_job_command(job: str, request: Schema, args: argparse.Namespace, readable: Callable[[R], str],
                    result_type: type[R]) -> int:
    """Run `job` in the worker, in a folder of its own, print its result (read through `result_type`) and return the
    exit status."""
    with job_folder(job) as out:
        result = run_in_worker(job, request, out, args, result_type)
    return finish(result, bool(getattr(args, "json", False)), readable)


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain text table, columns left-aligned except numbers."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        cells = []
        for i, cell in enumerate(row):
            s = str(cell)
            numeric = s.replace(".", "", 1).replace("-", "", 1).replace("+", "", 1).isdigit()
            cells.append(s.rjust(widths[i]) if numeric else s.ljust(widths[i]))
        return "  ".join(cells).rstrip()

    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])
