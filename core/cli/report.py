"""`pt2-viewer report FILE.pt2|SCRIPT.py -o report.html`: one self-contained HTML file to attach to an issue.

A `.pt2` is read without torch; a script runs in the worker first (as `pt2-viewer export` runs it, into a temporary
folder unless `--export-dir` keeps it), and the report lists every export call with its outcome beside the graphs.
Exits 0 when the report was written, 1 when it could not be (one line saying why), 2 when the worker failed, 130 when
cancelled (the rule of core/cli/exit_status.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.cli.jobs import WORKER_HELP, deliver
from pt2_viewer.core.graph.overlays import OverlayFileError
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.remote.any_worker import worker_job
from pt2_viewer.core.jobs.schemas.export import ExportRequest
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.layout.records import LayoutError
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.report.script_report import REPORT_FILE
from pt2_viewer.core.report.write import write_archive_report, write_script_report
from pt2_viewer.core.util.words import format_bytes

EXIT_FAILED = exit_status.FAILED
EXIT_WORKER_FAILED = exit_status.USAGE_OR_WORKER


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .pt2 archive, a model script (.py), or a folder written by pt2-viewer export")
    parser.add_argument("more", nargs="*", metavar="OTHER.pt2",
                        help="more .pt2 archives to show side by side (a program and its decomposition)")
    parser.add_argument("-o", "--output", required=True, help="the HTML file to write")
    parser.add_argument("--overlay", metavar="FILE.json", default=None,
                        help="colour the program's nodes: a `pt2-viewer numerics --json` result (the error overlay) "
                        "or your own {node_name: value} JSON")
    parser.add_argument("--diagnose", action="store_true",
                        help="for a script: list every export problem (draft export)")
    parser.add_argument("--export-dir", default=None, help="for a script: keep the exported programs in this folder")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="for a script: time limit")
    parser.add_argument("--worker", default=None, metavar="PYTHON|ssh://[USER@]HOST[:PORT]/PATH/python",
                        help="for a script: " + WORKER_HELP)


def main(args: argparse.Namespace) -> int:
    source = Path(args.file).expanduser()
    if not source.exists():
        print(f"pt2-viewer report: '{source}' does not exist. Check the path.", file=sys.stderr)
        return EXIT_FAILED
    if source.is_dir() and not (source / REPORT_FILE).is_file():
        print(f"pt2-viewer report: '{source}' is a folder without the {REPORT_FILE} that pt2-viewer export writes. "
              "Give a .pt2 file, a model script (.py), or a folder written by pt2-viewer export.", file=sys.stderr)
        return EXIT_FAILED
    try:
        if source.is_dir():
            size = write_script_report(source, args.output)
        elif source.suffix == ".py":
            code = _export_script(source, args)
            if isinstance(code, int):
                return code
            try:
                size = write_script_report(code, args.output)
            finally:
                if args.export_dir:  # the programs and report.json, not the job's request.json and result.json
                    deliver(code, Path(args.export_dir).expanduser().resolve())
                temp_dirs.remove(code)  # the page holds the programs; the run folder is not needed
        else:
            size = write_archive_report([source, *args.more], args.output, overlay=args.overlay)
    except (ArchiveError, OverlayFileError) as e:
        print(f"pt2-viewer report: {e}", file=sys.stderr)
        return EXIT_FAILED
    except LayoutError as e:
        print(f"pt2-viewer report: could not lay out the graph of {source}: {e}", file=sys.stderr)
        return EXIT_FAILED
    except (OSError, ValueError) as e:
        print(f"pt2-viewer report: could not write the report of {source}: {e}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as e:  # a bug, or a file nobody foresaw: one line, never a traceback
        print(f"pt2-viewer report: could not make the report of {source}: internal error {type(e).__name__}: {e}. "
              "Please report this with the file.", file=sys.stderr)
        return EXIT_FAILED
    print(f"{args.output} ({format_bytes(size)})")
    return 0


def _export_script(script: Path, args: argparse.Namespace) -> Path | int:
    """Run the script in the worker (quietly), in a temporary folder of its own; the folder holding report.json, or
    an exit code."""

    out = temp_dirs.new_dir("report")
    request = ExportRequest(script=str(script.resolve()), diagnose=bool(args.diagnose))
    job = worker_job(JobSpec("export_script", request, out, timeout_s=args.timeout), args.worker)
    try:
        outcome = job.wait()
    except KeyboardInterrupt:
        print("pt2-viewer report: cancelled", file=sys.stderr)
        temp_dirs.remove(out)
        return exit_status.CANCELLED
    finally:
        job.cancel()
    if outcome.status != protocol.OK:
        print(f"pt2-viewer report: {outcome.message}", file=sys.stderr)
        temp_dirs.remove(out)
        return EXIT_WORKER_FAILED
    return out
