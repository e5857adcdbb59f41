"""`pt2-viewer lower SOURCE.pt2 --to portable|xnnpack -o OUT.pte [--json]`: the lower job from a terminal.

Writes OUT.pte and its ETRecord (OUT.etrecord) and says, for every call_function node of the source, whether it was
delegated and, when not, the partitioner's reason (core/deploy/why.py). `--json` prints exactly `{"pte", "etrecord",
"backend", "delegated", "not_delegated"}`. The job runs in the worker; its own files go to a temp folder, never beside
the output.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from pt2_viewer.core.cli.jobs import (
    add_program_arguments,
    add_worker_arguments,
    report_failure,
    run_in_worker,
    table,
    trust_fields,
)
from pt2_viewer.core.deploy.delegation import reason_rows
from pt2_viewer.core.jobs.schemas.lower import BACKENDS, LowerRequest, LowerResult

JSON_KEYS = ("pte", "etrecord", "backend", "delegated", "not_delegated")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the .pt2 program to lower")
    parser.add_argument("--to", default="xnnpack", choices=BACKENDS,
                        help="portable kernels only, or XNNPACK where its partitioner takes an op (default)")
    parser.add_argument("-o", "--output", type=Path, help="where to write the .pte (default: FILE's name with "
                        ".BACKEND.pte, beside it); the ETRecord goes beside it as .etrecord")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_program_arguments(parser)
    add_worker_arguments(parser, "the lowering")


def main(args: argparse.Namespace) -> int:
    output = (args.output or args.file.with_name(f"{args.file.stem}.{args.to}.pte")).absolute()
    request = LowerRequest(program=str(args.file.absolute()), to=args.to, output=str(output),
                           program_name=args.program, preload=str(args.preload) if args.preload else None,
                           **trust_fields(args))
    with tempfile.TemporaryDirectory(prefix="pt2v-lower-") as work:
        result = run_in_worker("lower", request, Path(work), args)
    if args.json and result.get("ok"):
        print(json.dumps({k: result.get(k) for k in JSON_KEYS}, indent=1))
    if not result.get("ok"):
        if args.json:
            print(json.dumps({k: v for k, v in result.items() if k != "log"}, indent=1))
        return report_failure(result)
    if not args.json:
        print(readable(LowerResult.from_json(result)))
    return 0


def readable(result: LowerResult) -> str:
    delegated, left = result.delegated or [], result.not_delegated or []
    lines = [f"wrote {result.pte} and {result.etrecord} ({result.backend})",
             f"{len(delegated)} of {len(delegated) + len(left)} ops delegated"]
    if left:
        lines.append("not delegated:")
        lines.append(table([[r.op, str(r.count), r.reason] for r in reason_rows(left)], ["op", "count", "reason"]))
    return "\n".join(lines)
