"""The worker protocol: how a job process talks to whoever started it. Plain data, no torch, no Qt.

A job runs as `python -m pt2_viewer.core.worker JOB --request REQUEST.json --out DIR` in its own process group. It
writes JSON objects, one per line, to the file descriptor named in the environment variable `PT2V_EVENTS_FD`; its
stdout and stderr belong to the user's script and are streamed separately. Every event has a "type":

  started   {"job", "pid"}                                  the worker is up (before importing torch)
  progress  {"stage", "message"}                            a step began; free text for a status bar
  (job)     job-specific events, e.g. export_started/export_finished (docs/worker.md)
  done      {"result": "result.json"}                       run_job returned; DIR/result.json holds its dict
  error     {"message", "traceback"}                        run_job raised; the job failed

Each event's fields are a dataclass of core/jobs/schemas/events.py; `decode_event` checks a line against it.
A process that ends without `done` or `error` crashed, was killed, or called os._exit: `describe_exit` says which in
words. See docs/worker.md for the full description.
"""
from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.schemas.base import SchemaError
from pt2_viewer.core.jobs.schemas.events import EVENTS, Event
from pt2_viewer.core.jobs.schemas.events import RESULT_FILE as RESULT_FILE  # re-exported
from pt2_viewer.core.util.files import write_atomically

EVENTS_FD_ENV = "PT2V_EVENTS_FD"
REQUEST_FILE = "request.json"

STARTED = "started"
PROGRESS = "progress"
DONE = "done"
ERROR = "error"

# How a job ended, as seen by the client (JobOutcome.status).
OK = "ok"  # `done` received and the process exited with 0
FAILED = "failed"  # the job raised (`error` event) or exited non-zero after its result
CRASHED = "crashed"  # the process ended without `done`/`error`: a signal, os._exit, a native crash
CANCELLED = "cancelled"  # the user cancelled it
TIMED_OUT = "timed_out"  # it ran past its time limit and was killed
OUT_OF_MEMORY = "out_of_memory"  # its processes together grew past the memory limit and were killed
START_FAILED = "start_failed"  # the process could not be started at all

_SIGNAL_WORDS: dict[int, str] = {
    signal.SIGSEGV: "crashed with a segmentation fault (SIGSEGV): native code (a C extension, ctypes or torch "
                    "itself) read or wrote memory it does not own",
    signal.SIGABRT: "aborted (SIGABRT): native code gave up, often because a memory allocation failed under the "
                    "memory limit or an internal assertion failed",
    signal.SIGKILL: "was killed (SIGKILL): the system ran out of memory (the kernel's OOM killer) or someone "
                    "killed it",
    signal.SIGBUS: "crashed with a bus error (SIGBUS): bad memory access in native code, or the disk filled up",
    signal.SIGFPE: "crashed with an arithmetic error (SIGFPE) in native code",
    signal.SIGILL: "crashed on an illegal instruction (SIGILL): a library built for a different CPU",
    signal.SIGTERM: "was terminated (SIGTERM)",
    signal.SIGINT: "was interrupted (SIGINT)",
    signal.SIGXCPU: "ran out of CPU time (SIGXCPU, CPU time limit)",
}


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as a JSON line; it must have a "type"."""
    if "type" not in event:
        raise ValueError(f"worker event without a 'type': {event!r}")
    return (json.dumps(event, default=str, separators=(",", ":")) + "\n").encode("utf-8")


def decode_event(line: bytes | str) -> dict[str, Any]:
    """Parse one JSON line; anything that is not an object with a "type" becomes a `garbled` event, never raises."""
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return {"type": "garbled", "text": text.rstrip("\n")}
    if not isinstance(event, dict) or not isinstance(event.get("type"), str) or not _well_formed(event):
        return {"type": "garbled", "text": text.rstrip("\n")}
    return event


def _well_formed(event: dict[str, Any]) -> bool:
    """The event fits its schema (core/jobs/schemas/events.py); events without one (a job's own) pass. The events
    channel is untrusted input: a script or a decomposition table runs in the worker and can write to it."""
    schema = EVENTS.get(event["type"])
    if schema is None:
        return True
    try:
        schema.from_json(event)
    except (SchemaError, RecursionError):
        return False
    return True


def read_event(event: dict[str, Any]) -> Event:
    """A decoded event as its dataclass (`Event` for a job's own kinds); `SchemaError` if it does not fit."""
    return EVENTS.get(str(event.get("type")), Event).from_json(event)


def describe_exit(returncode: int | None, *, got_result: bool = False) -> str:
    """A worker's exit status in words for the user ("crashed with a segmentation fault (SIGSEGV): ...")."""
    if returncode is None:
        return "is still running"
    if returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return "The worker " + _SIGNAL_WORDS.get(sig, f"was stopped by {name}") + "."
    if returncode == 0:
        if got_result:
            return "The worker finished normally."
        return ("The worker exited with code 0 before the job finished: the script ended the process itself "
                "(os._exit(0) or a library that calls exit).")
    return (f"The worker exited with code {returncode} before the job finished: the script ended the process "
            f"itself (os._exit or a native library calling exit()), or Python could not start.")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to `path` atomically, so readers never see half."""
    write_atomically(path, json.dumps(data, indent=2, default=str) + "\n")
