"""`pt2-viewer trace DIR|LOG|SCRIPT.py [-o DIR] [--json]`: a torch.compile trace (`TORCH_TRACE=DIR`) read without
torch: every compile per rank, every graph break once at the user's line with its fix, every recompile with the
guard that failed in words (docs/trace.md).

Given a script, it first runs it in a fresh worker under `TORCH_TRACE` (the `trace_script` job, core/export/
trace_job.py: provenance tracking on, the compile caches off), with the limits and cancel of `export`, into `-o DIR`
(else a new folder of its own in the temp folder, named on stderr), then answers as for that folder. DIR may be
missing, empty, or an earlier trace (whose logs this run's replace); anything else is refused.

Exit 0; 1 for a file it cannot read, a damaged log (what came before the damage is printed, and one line says where
it stopped), or a script that stopped with an error (one line at its line); 2 for bad arguments or a worker that
could not finish; 130 cancelled."""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.cli.jobs import add_worker_arguments, job_folder, log_where, run_in_worker
from pt2_viewer.core.cli.output import print_json
from pt2_viewer.core.formats.probe import Probe
from pt2_viewer.core.formats.registry import Opens, recognise
from pt2_viewer.core.jobs.schemas.failure import Failure, saying_where_the_log_is
from pt2_viewer.core.jobs.schemas.trace import SCRIPT_FAILED, TRACE_FOLDER, TraceRequest, TraceResult
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.reader import LOG_GLOB, read_trace
from pt2_viewer.core.trace.summary import summary_text, trace_json
from pt2_viewer.core.util.files import write_atomically


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", help="a TORCH_TRACE folder, one of its dedicated_log_torch_trace_*.log files, or a "
                                      "Python script to run under TORCH_TRACE first")
    parser.add_argument("-o", "--out", default=None, metavar="DIR",
                        help="with a script: the folder for its trace (default: a new folder in the temp folder)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (a stable format for scripts)")
    add_worker_arguments(parser, "the script")
    parser.add_argument("-q", "--quiet", action="store_true", help="with a script: do not echo its own output")


def main(args: argparse.Namespace) -> int:
    path = Path(args.trace).expanduser()
    if path.is_file() and recognise(Probe(str(path.resolve()))).opens_as is Opens.SCRIPT:
        return _trace_script(args, path.resolve())
    if args.out is not None and path.exists():  # a missing path is said by the reader, in one line (exit 1)
        print("pt2-viewer trace: -o is for a script (trace SCRIPT.py -o DIR); a trace folder or log is read where "
              "it lies", file=sys.stderr)
        return exit_status.USAGE_OR_WORKER
    return answer(args.trace, args.json)


def answer(path: str | Path, as_json: bool) -> int:
    """Print the trace at `path` (its summary, or its JSON) and return the exit status."""
    try:
        trace = read_trace(path)
    except TraceError as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return exit_status.FAILED
    if as_json:
        print_json(trace_json(trace))
    else:
        print(summary_text(trace))
    if trace.damage:
        print(f"pt2-viewer: {trace.damage}; what came before it is shown", file=sys.stderr)
        return exit_status.FAILED
    return exit_status.OK


class OutRefused(ValueError):
    """The folder named for the trace holds something else: it is never written into."""


def check_out(out: Path) -> None:
    """`out` may be missing, an empty folder, or an earlier trace (only its trace logs are replaced)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise OutRefused(f"{out} is a file, not a folder; name a new or empty folder for the trace")
    entries = list(out.iterdir())
    if entries and not any(out.glob(LOG_GLOB)):
        raise OutRefused(f"{out} is not empty and holds no torch.compile trace; name a new or empty folder (nothing "
                         "in it was changed)")


def _trace_script(args: argparse.Namespace, script: Path) -> int:
    if args.out is not None:
        out = Path(args.out).expanduser().resolve()
        try:
            check_out(out)
        except OutRefused as e:
            print(f"pt2-viewer trace: {e}", file=sys.stderr)
            return exit_status.USAGE_OR_WORKER
    else:
        out = Path(tempfile.mkdtemp(prefix=f"pt2-viewer-trace-{script.stem[:40]}-"))
    with job_folder("trace") as job_dir:
        result = run_in_worker("trace_script", TraceRequest(script=str(script)), job_dir, args, TraceResult)
        logs = deliver_trace(job_dir / TRACE_FOLDER, out)
    if not logs and args.out is None:
        out.rmdir()  # the empty folder this command made: nothing to keep
    kept = f"the trace of {script.name} is in {out}" if logs else f"{script.name} wrote no trace"
    if not result.ok:
        failure = result.error or Failure("internal", "The job failed.")
        message = failure.message
        if failure.kind != SCRIPT_FAILED:  # the worker's failure: where its log is, and what to do
            message = saying_where_the_log_is(f"{message} {failure.hint}".strip(), log_where(failure))
        print(f"pt2-viewer trace: {message} ({kept})", file=sys.stderr)
        return exit_status.for_failure_kind(failure.kind)
    if not logs:
        print(f"pt2-viewer trace: {script.name} ran but compiled nothing with torch.compile, so torch wrote no "
              "trace", file=sys.stderr)
        return exit_status.FAILED
    print(f"pt2-viewer trace: {kept}", file=sys.stderr)
    return answer(out, args.json)


def deliver_trace(source: Path, out: Path) -> list[str]:
    """This run's logs into `out`, each written atomically; an earlier trace's logs there are replaced (removed
    only once this run's are written, and only when this run wrote any)."""
    new = sorted(p.name for p in source.glob(LOG_GLOB)) if source.is_dir() else []
    if not new:
        return []
    out.mkdir(parents=True, exist_ok=True)
    old = [p for p in out.glob(LOG_GLOB) if p.name not in new]
    for name in new:
        write_atomically(out / name, partial(shutil.copyfile, source / name))
    for p in old:
        p.unlink(missing_ok=True)
    return new
