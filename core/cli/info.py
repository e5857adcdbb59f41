"""`pt2-viewer info FILE.pt2 [--json]`: no Qt, no torch, no tracebacks for bad files (exit status 1, as every command
gives for a file it cannot use: core/cli/exit_status.py)."""
from __future__ import annotations

import argparse
import json
import sys

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.info import archive_info, summary_text
from pt2_viewer.core.pt2.reader import read_archive


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .pt2 archive written by torch.export.save")
    parser.add_argument("--json", action="store_true", help="print one JSON object (a stable format for scripts)")


def main(args: argparse.Namespace) -> int:
    try:
        archive = read_archive(args.file)
    except ArchiveError as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return exit_status.FAILED
    if args.json:
        json.dump(archive_info(archive), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(summary_text(archive))
    return 0
