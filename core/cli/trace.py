"""`pt2-viewer trace DIR|LOG [--json]`: a torch.compile trace (`TORCH_TRACE=DIR`) read without torch: every
compile per rank, every graph break once at the user's line with its fix, every recompile with the guard that
failed in words (docs/trace.md). Exit 0; 1 for a file it cannot read, or a damaged log (what came before the damage
is printed, and one line says where it stopped); 2 for bad arguments."""
from __future__ import annotations

import argparse
import sys

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.cli.output import print_json
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.reader import read_trace
from pt2_viewer.core.trace.summary import summary_text, trace_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", help="a TORCH_TRACE folder or one of its dedicated_log_torch_trace_*.log files")
    parser.add_argument("--json", action="store_true", help="print one JSON object (a stable format for scripts)")


def main(args: argparse.Namespace) -> int:
    try:
        trace = read_trace(args.trace)
    except TraceError as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return exit_status.FAILED
    if args.json:
        print_json(trace_json(trace))
    else:
        print(summary_text(trace))
    if trace.damage:
        print(f"pt2-viewer: {trace.damage}; what came before it is shown", file=sys.stderr)
        return exit_status.FAILED
    return exit_status.OK
