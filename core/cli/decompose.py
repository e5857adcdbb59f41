"""`pt2-viewer decompose FILE --to functional|core|TABLE.py -o OUT.pt2`: the decompose job from a terminal.

Writes the decomposed program to OUT.pt2 and the node mapping beside it (OUT.mapping.json), and nothing else there (the
job's own files stay in its temporary folder); prints the op diff and
the ops left outside core ATen; exits non-zero with the job's message when it fails. The job runs in the worker
(core/cli/jobs.py: PT2V_WORKER_PYTHON or Preferences, `--timeout`, `--max-memory-mb`).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pt2_viewer.core.cli.jobs import (
    add_program_arguments,
    add_worker_arguments,
    run_job_command,
    table,
    trust_fields,
)
from pt2_viewer.core.jobs.schemas.decompose import DecomposeRequest, DecomposeResult


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the .pt2 program to decompose")
    parser.add_argument("--to", default="core", metavar="functional|core|TABLE.py",
                        help="functional ATen, core ATen (default), or a Python file holding a decomposition table")
    parser.add_argument("-o", "--output", type=Path, help="where to write the decomposed .pt2 "
                        "(default: FILE's name with .TARGET.pt2, beside it)")
    parser.add_argument("--table-name", help="name of the table (dict or function) in TABLE.py, if it has several")
    parser.add_argument("--json", action="store_true", help="print the job's result as one JSON object")
    add_program_arguments(parser)
    add_worker_arguments(parser, "the decomposition")


def default_output(file: Path, to: str) -> Path:
    label = Path(to).stem if to.endswith(".py") else to
    return file.with_name(f"{file.stem}.{label}.pt2")


def main(args: argparse.Namespace) -> int:
    output = args.output or default_output(args.file, args.to)
    request = DecomposeRequest(program=str(args.file), to=args.to, output=str(output), table_name=args.table_name,
                               program_name=args.program, preload=str(args.preload) if args.preload else None,
                               **trust_fields(args))
    return run_job_command("decompose", request, args, readable, DecomposeResult)


def readable(result: DecomposeResult) -> str:
    lines = [f"wrote {result.output} ({result.nodes_before} -> {result.nodes_after} nodes)",
             f"node mapping: {result.mapping}"]
    changed = [r for r in result.op_diff or [] if r.change]
    if changed:
        lines.append(table([[r.op, str(r.before), str(r.after), f"{r.change:+d}"] for r in changed],
                           ["op", "before", "after", "change"]))
    if result.non_core_ops:
        lines.append("ops outside core ATen: " + ", ".join(f"{op} x{n}" for op, n in result.non_core_ops.items()))
    return "\n".join(lines)
