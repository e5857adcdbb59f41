"""`pt2-viewer profile PROGRAM TRACE.json [--trace DIR] [--onnx MODEL.onnx] [--json]`: a `torch.profiler` Chrome trace
of the program's eager module, or with `--trace` of its compiled code (the run's TORCH_TRACE folder, or the
AOTInductor package, holding Inductor's kernel provenance; a package given as PROGRAM uses its own), recorded on any
machine, attributed to the program's nodes (core/profile/, docs/profile.md). A `.onnx` PROGRAM takes ONNX Runtime's
profile (`onnxruntime_profile_*.json`); `--onnx` puts that profile of MODEL.onnx on the `.pt2` it was exported from,
through the ONNX nodes' links. No Qt, no torch.

Exit status (core/cli/exit_status.py): 0 attributed; 1 a program or trace it cannot use (unreadable, hostile, or a
trace of another program, each said in one line); 2 wrong arguments."""
from __future__ import annotations

import argparse
import sys

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.cli.output import print_json
from pt2_viewer.core.formats import registry
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.load import profile_attribution
from pt2_viewer.core.profile.summary import profile_json, profile_text
from pt2_viewer.core.pt2.errors import ArchiveError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("program", help="the .pt2 whose eager module (ep.module()) the trace profiled, or the .onnx "
                                        "ONNX Runtime ran")
    parser.add_argument("trace", help="the Chrome trace JSON torch.profiler wrote (prof.export_chrome_trace), or .gz; "
                                      "for an .onnx, the onnxruntime_profile_*.json of SessionOptions.enable_profiling")
    parser.add_argument("--trace", dest="torch_trace", default=None, metavar="DIR",
                        help="the TORCH_TRACE folder of the torch.compile run the profile recorded, or the "
                             "AOTInductor package it ran: its kernels are attributed through Inductor's provenance "
                             "(provenance_tracking_level=1)")
    parser.add_argument("--onnx", dest="onnx_model", default=None, metavar="MODEL.onnx",
                        help="TRACE is ONNX Runtime's profile of MODEL.onnx, exported from PROGRAM: its nodes' times "
                             "are put on PROGRAM's nodes through the ONNX nodes' links")
    parser.add_argument("--program", dest="program_name", default=None, metavar="NAME",
                        help="which program of the archive the trace ran, when it holds several (default: the first)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (a stable format for scripts)")


def main(args: argparse.Namespace) -> int:
    try:
        archive = registry.read(args.program)
        program = archive.program(args.program_name)
        if args.torch_trace is not None and (args.onnx_model is not None or archive.archive_format == "onnx"):
            print("pt2-viewer profile: --trace is for a torch.compile run's profile; ONNX Runtime's profile of an "
                  ".onnx is given without it", file=sys.stderr)
            return exit_status.USAGE_OR_WORKER
        result = profile_attribution(program, args.trace, args.torch_trace, program_label=args.program,
                                     archive=archive, onnx_model=args.onnx_model)
    except (ArchiveError, ProfileError) as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return exit_status.FAILED
    except KeyError as e:
        print(f"pt2-viewer: {args.program}: no program named {e}", file=sys.stderr)
        return exit_status.FAILED
    if args.json:
        for note in result.notes:  # the JSON keeps the fields; what the user should know goes to stderr
            print(f"pt2-viewer: {note}", file=sys.stderr)
        print_json(profile_json(result))
    else:
        print(profile_text(result))
    return exit_status.OK
