"""`pt2-viewer numerics FILE.pt2 --candidate core|functional|TABLE.py|bf16|fp16|cuda|compile|aoti|onnx|FILE.pte|
FILE.onnx [--threshold X] [--json]`: compare a program with a candidate node by node and print the first divergence
and the worst nodes.

With --json it prints the numerics job's result as one JSON object (docs/numerics.md): per-node metrics (`nodes`),
`first_divergence`, `worst`, `memory`. Finding a divergence is an answer, not a failure: the exit status is non-zero
only when the comparison could not run (1; 2 for a malformed request; 130 when cancelled). The comparison runs in the
worker (core/cli/jobs.py: PT2V_WORKER_PYTHON or Preferences, `--timeout`, `--max-memory-mb`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pt2_viewer.core.cli.jobs import (
    add_program_arguments,
    add_worker_arguments,
    run_job_command,
    table,
    trust_fields,
)
from pt2_viewer.core.deploy.etrecord_choice import etrecord_words
from pt2_viewer.core.jobs.schemas.numerics import Memory, NumericsRequest, NumericsResult
from pt2_viewer.core.numerics.metrics import DEFAULT_THRESHOLD

CANDIDATE_HELP = ("core or functional ATen, a decomposition table TABLE.py, bf16 or fp16 (casts inputs, parameters and "
                  "buffers down), cuda (the same program on the GPU), compile (outputs only), aoti (built with "
                  "torch's provenance: kernel by kernel), or what the program became: FILE.pte (ExecuTorch) or an "
                  "AOTInductor FILE.pt2 (kernel by kernel when built with provenance and saved values, else outputs "
                  "only; a package needs --allow-native), FILE.onnx (ONNX Runtime, op by op), or onnx (the program "
                  "exported to ONNX first, as lower --to onnx does)")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the .pt2 program (the reference); or a model script (.py, in the "
                        "convention of docs/worker.md): its eager model is the reference for its exported program")
    parser.add_argument("--candidate",
                        metavar="core|functional|TABLE.py|bf16|fp16|cuda|compile|aoti|onnx|FILE.pte|FILE.onnx",
                        help=CANDIDATE_HELP + "; required for a .pt2")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                        help=f"relative error max|ref-cand|/max|ref| past which a node diverges "
                        f"(default {DEFAULT_THRESHOLD})")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--inputs", choices=("auto", "sample", "generated"), default="auto",
                        help="the archive's sample inputs or generated ones (auto: sample when saved)")
    parser.add_argument("--seed", type=int, default=0, help="seed for generated inputs")
    parser.add_argument("--top", type=int, default=10, help="how many of the worst nodes to list (default 10)")
    parser.add_argument("--budget-mb", type=float, default=1024,
                        help="reference values held in memory before spilling to disk (default 1024)")
    parser.add_argument("--table-name", help="name of the table in TABLE.py, if it has several")
    parser.add_argument("--etrecord", type=Path, metavar="FILE.etrecord",
                        help="a FILE.pte candidate's ETRecord, to map its instructions to the source's nodes "
                        "(default: NAME.etrecord beside the .pte; else the source is lowered again with the file's "
                        "backend and used only when its instructions equal the file's)")
    parser.add_argument("--etdump", type=Path, metavar="RUN.etdp",
                        help="a FILE.pte candidate: compare the values this ETDump recorded where the file ran (a "
                        "phone, a board) instead of running it; the device is taken to have run the source's inputs")
    parser.add_argument("--debug-buffer", type=Path, metavar="RUN.bin",
                        help="with --etdump: the debug buffer written with it, which holds the values")
    add_program_arguments(parser)
    add_worker_arguments(parser, "the comparison")


def main(args: argparse.Namespace) -> int:
    script = args.file.suffix == ".py"
    if not script and not args.candidate:
        print("error: --candidate is required for a .pt2 (core, functional, TABLE.py, bf16, fp16, cuda, compile, "
              "aoti, onnx, FILE.pte or FILE.onnx)", file=sys.stderr)
        return 2
    if args.debug_buffer and not args.etdump:
        print("error: --debug-buffer is the one written with an ETDump: pass --etdump RUN.etdp too", file=sys.stderr)
        return 2
    if (args.etdump or args.debug_buffer) and not str(args.candidate or "").endswith(".pte"):
        print("error: --etdump and --debug-buffer are a recording of a FILE.pte candidate: pass --candidate FILE.pte",
              file=sys.stderr)
        return 2
    request = NumericsRequest(
        program=str(args.file), candidate=args.candidate or "core", script=str(args.file) if script else None,
        threshold=args.threshold, inputs=args.inputs, seed=args.seed, top=args.top, budget_mb=args.budget_mb,
        table_name=args.table_name, program_name=args.program, preload=str(args.preload) if args.preload else None,
        etrecord=str(args.etrecord) if args.etrecord else None, etdump=str(args.etdump) if args.etdump else None,
        debug_buffer=str(args.debug_buffer) if args.debug_buffer else None, **trust_fields(args))
    return run_job_command("numerics", request, args, readable, NumericsResult)


def _num(v: Any) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB"


def readable(result: NumericsResult) -> str:
    source = result.inputs.source if result.inputs is not None else ""
    lines = [f"{result.program} against {result.candidate} ({source} inputs, threshold "
             f"{result.threshold or 0:g} on max|ref-cand|/max|ref|): {result.compared} "
             f"{'nodes' if result.per_node else 'outputs'} compared"]
    if result.note:
        lines.append(result.note)
    if result.compared_program:  # a FILE.pte: which program's instructions were mapped, and how
        lines.append(f"compared: {result.compared_program}")
    if result.etrecord_how:
        lines.append(f"ETRecord: {etrecord_words(result.etrecord_used, result.etrecord_how)}")
    found = result.first_divergence
    if found:
        lines.append(f"first divergence: {found.node} (error {_num(found.error)}; its inputs "
                     f"{', '.join(found.inputs) or 'none'} are within the threshold)")
    else:
        lines.append("no divergence: every compared value is within the threshold")
    unmatched = [r for r in result.nodes or [] if r.compared is False]
    if unmatched:
        listed = "; ".join(f"{r.node} ({r.note})" for r in unmatched[:5]) + ("; ..." if len(unmatched) > 5 else "")
        lines.append(f"{len(unmatched)} not compared (never a divergence): {listed}")
    rows = [[w.node, w.candidate, _num(w.max_abs), _num(w.max_rel), _num(w.cosine), _num(w.sqnr_db), str(w.nan),
             str(w.inf), w.note] for w in result.worst or []]
    if rows:
        lines.append(table(rows, ["node", "candidate", "max abs", "max rel", "cosine", "SQNR dB", "nan", "inf",
                                  "note"]))
    m = result.memory or Memory()
    lines.append(f"memory: {_mb(m.peak_held_bytes)} of reference values held at most, {_mb(m.spilled_bytes)} "
                 f"spilled to disk, worker peak {_mb(m.peak_rss_bytes)}")
    return "\n".join(lines)
