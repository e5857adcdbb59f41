"""`pt2-viewer lower SOURCE.pt2 --to portable|xnnpack -o OUT.pte [--json]`: the lower job from a terminal.
`--to onnx -o OUT.onnx` lowers to ONNX instead (core/cli/lower_onnx.py).

Writes OUT.pte and its ETRecord (OUT.etrecord) and says, for every call_function node of the source, whether it was
delegated and, when not, the partitioner's reason (core/deploy/why.py). `--json` prints exactly `{"pte", "etrecord",
"backend", "delegated", "not_delegated"}`. The job runs in the worker; its own files go to a temp folder, never beside
the output.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pt2_viewer.core.cli import exit_status, lower_onnx
from pt2_viewer.core.cli.jobs import (
    add_program_arguments,
    add_worker_arguments,
    finish,
    run_in_worker,
    table,
    trust_fields,
)
from pt2_viewer.core.deploy.delegation import reason_rows
from pt2_viewer.core.jobs.schemas.lower import BACKENDS, LowerRequest, LowerResult
from pt2_viewer.core.jobs.schemas.onnx_lower import ONNX


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the .pt2 program to lower")
    parser.add_argument("--to", default="xnnpack", choices=(*BACKENDS, ONNX),
                        help="ExecuTorch with portable kernels only, or XNNPACK where its partitioner takes an op "
                        "(default); or ONNX, with torch.onnx.export (dynamo=True)")
    parser.add_argument("-o", "--output", type=Path, help="where to write the .pte (default: FILE's name with "
                        ".BACKEND.pte, beside it; the ETRecord goes beside it as .etrecord), or the .onnx (default: "
                        "FILE's name with .lowered.onnx)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_program_arguments(parser)
    add_worker_arguments(parser, "the lowering")


def main(args: argparse.Namespace) -> int:
    if args.output is not None and args.output.is_dir():
        suffix = "onnx" if args.to == ONNX else "pte"
        print(f"error: -o {args.output} is a folder: name the file to write (e.g. {args.output / args.file.stem}."
              f"{suffix})", file=sys.stderr)
        return exit_status.USAGE_OR_WORKER
    if args.to == ONNX:
        return lower_onnx.main(args)
    output = (args.output or args.file.with_name(f"{args.file.stem}.{args.to}.pte")).absolute()
    request = LowerRequest(program=str(args.file.absolute()), to=args.to, output=str(output),
                           program_name=args.program, preload=str(args.preload) if args.preload else None,
                           **trust_fields(args))
    with tempfile.TemporaryDirectory(prefix="pt2v-lower-") as work:
        result = run_in_worker("lower", request, Path(work), args, LowerResult)
    if args.json and result.ok:
        print(json.dumps(delivered(result), indent=1))
        return 0
    return finish(result, args.json, readable)


def delivered(result: LowerResult) -> dict[str, Any]:
    """What `--json` prints of a lowering that worked: exactly these keys, in this order (docs/jobs.md, "lower")."""
    return {"pte": result.pte, "etrecord": result.etrecord, "backend": result.backend, "delegated": result.delegated,
            "not_delegated": None if result.not_delegated is None else [r.to_json() for r in result.not_delegated]}


def readable(result: LowerResult) -> str:
    delegated, left = result.delegated or [], result.not_delegated or []
    lines = [f"wrote {result.pte} and {result.etrecord} ({result.backend})",
             f"{len(delegated)} of {len(delegated) + len(left)} ops delegated"]
    if left:
        lines.append("not delegated:")
        lines.append(table([[r.op, str(r.count), r.reason] for r in reason_rows(left)], ["op", "count", "reason"]))
    return "\n".join(lines)
