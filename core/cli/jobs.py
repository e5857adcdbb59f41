"""What the `decompose` and `run` command lines share: running a job in this process with progress on stderr, and
printing a failed job's message and hint.

The command lines call the same `run_job` the worker calls, in-process: a terminal needs no separate process to cancel.
The file is checked before torch sees it (core/jobs/archive_check.py); `--trust` lets a file the user trusts run the
code it holds (pickled objects, imports).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.errors import Failure, failed_result, first_line

TRUST_HELP = ("load the file even if it holds code (pickled objects, modules to import): only for files you trust; "
              "without it such a file is refused, saying what it holds")
Job = Callable[[dict[str, Any], Path, Callable[[dict[str, Any]], None]], dict[str, Any]]


def add_program_arguments(parser: argparse.ArgumentParser) -> None:
    """What every command that loads a program with torch takes: which program, a file to import first, --trust
    and -q."""
    parser.add_argument("--program", help="which program of the archive (default: 'model')")
    parser.add_argument("--import", dest="preload", type=Path, metavar="FILE.py",
                        help="a Python file to import first, e.g. the definition of a custom op")
    parser.add_argument("--trust", action="store_true", help=TRUST_HELP)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def run_in_process(run_job: Job, request: dict[str, Any], out: Path, emit: Callable[[dict[str, Any]], None]
                   ) -> dict[str, Any]:
    """`run_job` here; an exception no job anticipated (a bug, or torch failing in a new way on a hostile file)
    becomes a failed result with one line, never a traceback on the terminal."""
    try:
        return run_job(request, out, emit)
    except Exception as e:  # noqa: BLE001
        import traceback

        return failed_result(Failure("internal", f"The job failed unexpectedly: {type(e).__name__}: {first_line(e)}",
                                     "Please report it with the file that caused it.", traceback.format_exc()))


def stderr_progress(quiet: bool) -> Callable[[dict[str, Any]], None]:
    def emit(event: dict[str, Any]) -> None:
        if not quiet and event.get("type") == "progress":
            print(f"[{event.get('stage')}] {event.get('message')}", file=sys.stderr, flush=True)

    return emit


def report_failure(result: dict[str, Any]) -> int:
    """Print a failed job's error to stderr; the exit status: 2 for a bad request, 1 for everything else."""
    error = result.get("error") or {}
    print(f"error: {_printable(str(error.get('message', 'the job failed')))}", file=sys.stderr)
    if error.get("hint"):
        print(f"  {_printable(str(error['hint']))}", file=sys.stderr)
    return 2 if error.get("kind") == "request" else 1


def _printable(text: str) -> str:
    """Text for a terminal: control characters from a hostile file's names shown as '?', never sent raw."""
    return "".join(c if c.isprintable() or c == "\n" else "?" for c in text)


def finish(result: dict[str, Any], as_json: bool, readable: Callable[[dict[str, Any]], str]) -> int:
    """Print the result (one JSON object, or `readable(result)`) and the failure if any; return the exit status."""
    if as_json:
        print(json.dumps({k: v for k, v in result.items() if k != "log"}, indent=1))
    if not result["ok"]:
        return report_failure(result)
    if not as_json:
        print(readable(result))
    return 0


def out_dir_for(path: Path) -> Path:
    """Where a command-line job keeps its scratch files: beside the output it writes."""
    return path.parent if str(path.parent) else Path(".")


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
