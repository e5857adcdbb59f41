"""`pt2-viewer info FILE.pt2 [--json]`: no Qt, no torch, no tracebacks for bad files (exit status 1, as every command
gives for a file it cannot use: core/cli/exit_status.py). The file is read by its format's reader, from the format
registry (core/formats/registry.py): a `.pt2`, an AOTInductor package, an ExecuTorch `.pte`, an ONNX model (whose
`--json` is the model as the file holds it: core/onnx/summary.py)."""
from __future__ import annotations

import argparse
import sys

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.cli.output import print_json
from pt2_viewer.core.formats import registry
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.info import archive_info, summary_text


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .pt2 archive written by torch.export.save")
    parser.add_argument("--json", action="store_true", help="print one JSON object (a stable format for scripts)")


def main(args: argparse.Namespace) -> int:
    if args.json and registry.recognise(args.file) is registry.ONNX:
        return _onnx_json(args.file)
    try:
        archive = registry.read(args.file)
    except ArchiveError as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return exit_status.FAILED
    if args.json:
        print_json(archive_info(archive))
    else:
        print(summary_text(archive))
    return 0


def _onnx_json(path: str) -> int:
    """A `.onnx`'s JSON is the model as the file holds it (core/onnx/summary.py), not the viewer's program."""
    from pt2_viewer.core.onnx.errors import OnnxError  # deferred: onnx brings numpy and protobuf
    from pt2_viewer.core.onnx.reader import load_model
    from pt2_viewer.core.onnx.summary import onnx_info

    try:
        info = onnx_info(load_model(path))
    except OnnxError as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return exit_status.FAILED
    print_json(info)
    return 0
