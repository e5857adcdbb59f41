"""`pt2-viewer run FILE --device cpu|cuda [--json]`: run a program and print its outputs' summaries and latency.

With --json it prints the run job's result as one JSON object (fields in docs/jobs.md): `ok`, `device`,
`cuda_available`, `inputs`, `outputs` (name, dtype, shape, min, max, mean, nan, inf, preview), `latency` (median_s,
min_s, max_s, iqr_s, warmup, runs) and, when asked, `node_times`/`hottest`, `compile` and `aoti`. Without --json, a
readable table. Exits 1 with the job's message when the run fails (2 for a malformed command, 130 when cancelled).
The run happens in the worker (core/cli/jobs.py): the Python PT2V_WORKER_PYTHON or Preferences chose, `--timeout`,
`--max-memory-mb`.
"""
from __future__ import annotations

import argparse
import math
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
from pt2_viewer.core.formats.probe import Probe
from pt2_viewer.core.formats.registry import FALLBACK, recognise
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.run import Inputs, RunRequest, RunResult
from pt2_viewer.core.run.dispatch import run_job_for
from pt2_viewer.core.run.readout import dtype_text


def _dim(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not value.strip().lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=SIZE (e.g. s0=8 or x.shape[0]=8)")
    return name.strip(), int(value)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the .pt2 program, ExecuTorch .pte or AOTInductor package to run")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--inputs", choices=("auto", "sample", "generated"), default="auto",
                        help="the sample inputs saved with the program, or inputs generated from its signature "
                        "(auto: sample when saved)")
    parser.add_argument("--dim", type=_dim, action="append", default=[], metavar="NAME=SIZE",
                        help="size of a dynamic dim for generated inputs (symbol or x.shape[0]); repeatable")
    parser.add_argument("--seed", type=int, default=0, help="seed for generated inputs")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--runs", type=int, default=10, help="timed runs (default 10)")
    parser.add_argument("--node-times", action="store_true", help="also time each node; list the hottest")
    parser.add_argument("--compile", action="store_true", help="also compare with torch.compile (slow on CPU)")
    parser.add_argument("--aoti", type=Path, metavar="PACKAGE.pt2",
                        help="also build an AOTInductor package here, run it and compare")
    parser.add_argument("--source", type=Path, metavar="SOURCE.pt2",
                        help="a .pte or AOTInductor package: run it on this program's inputs (its sample, or "
                        "generated)")
    parser.add_argument("--compiled", action="store_true",
                        help="a package holding its program and AOTInductor code: run the compiled code "
                        "(needs --allow-native)")
    parser.add_argument("--etrecord", type=Path, metavar="FILE.etrecord",
                        help="a .pte's ETRecord: with --source and --node-times, time the source's nodes through it "
                        "(default: NAME.etrecord beside the .pte; else the source is lowered again and used only "
                        "when its instructions equal the file's)")
    parser.add_argument("--etdump", type=Path, metavar="RUN.etdp",
                        help="a .pte: read this ETDump, recorded where the file ran (a phone, a board), instead of "
                        "running it: node_times (and with --source, source_node_times), each node's median, p90 and "
                        "count over its runs, and the events from inside delegates")
    parser.add_argument("--debug-buffer", type=Path, metavar="RUN.bin",
                        help="with --etdump: the debug buffer written with it (checked against it)")
    add_program_arguments(parser)
    add_worker_arguments(parser, "the run")


def _a_program(path: Path) -> bool:
    """Whether `path` is a program of some other kind (a .pt2, an .onnx): then --etdump is the wrong flag for it (exit
    2). A file that is no program at all (missing, a folder, text named .pte) is left to the job, which names what
    is wrong with it (exit 1), as `run` without --etdump does."""
    probe = Probe(path)
    return probe.zip_listing is not None or recognise(probe) is not FALLBACK


def main(args: argparse.Namespace) -> int:
    request = RunRequest(
        program=str(args.file), device=args.device, inputs=args.inputs, dims=dict(args.dim), seed=args.seed,
        warmup=args.warmup, runs=args.runs, node_times=args.node_times, compile=args.compile,
        aoti=args.aoti is not None, aoti_package=str(args.aoti) if args.aoti else None, program_name=args.program,
        preload=str(args.preload) if args.preload else None, **trust_fields(args))
    job = run_job_for(args.file, args.compiled)
    if args.debug_buffer and not args.etdump:
        print("error: --debug-buffer is the one written with an ETDump: pass --etdump RUN.etdp too", file=sys.stderr)
        return 2
    if (args.etdump or args.debug_buffer) and job != "run_pte" and _a_program(args.file):
        print("error: --etdump and --debug-buffer read a recording of an ExecuTorch .pte: name the .pte it ran",
              file=sys.stderr)
        return 2
    if job != "run_program":  # an ExecuTorch .pte or AOTInductor code (core/run/pte_job.py, aoti_job.py)
        fields = {k: v for k, v in request.to_json().items() if k not in ("version",)}
        request = ArtifactRunRequest.from_json({**fields, "source": str(args.source) if args.source else None,
                                                "etrecord": str(args.etrecord) if args.etrecord else None,
                                                "etdump": str(args.etdump) if args.etdump else None,
                                                "debug_buffer": str(args.debug_buffer) if args.debug_buffer else None})
    return run_job_command(job, request, args, readable, RunResult)


def _ms(seconds: float) -> str:
    """Milliseconds with at least three significant digits: a node of a small program takes microseconds, which
    three decimals would print as 0.000."""
    ms = seconds * 1e3
    if ms <= 0 or not math.isfinite(ms):
        return f"{ms:.3f}"
    return f"{ms:.{max(3, 2 - math.floor(math.log10(ms)))}f}"


def _stat(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v if v is not None else "")


def _recorded(result: RunResult) -> str:
    """An imported ETDump's times: the slowest nodes with their distribution, the events inside delegates."""
    stats = result.node_time_stats or {}
    runs = max((s.count for s in stats.values()), default=0)
    lines = [f"{result.program}: {len(stats)} instructions timed in {Path(result.etdump or '').name} "
             f"({runs} recorded run{'s' if runs != 1 else ''})"]
    rows = [[h.node, _ms(h.seconds), _ms(stats[h.node].median_s), _ms(stats[h.node].p90_s), str(stats[h.node].count)]
            for h in result.hottest or [] if h.node in stats]
    lines.append(table(rows, ["node", "min ms", "median ms", "p90 ms", "runs"]))
    events = sorted(result.delegate_events or [], key=lambda e: -e.median_s)[:10]
    if events:
        lines.append(table([[e.node, e.event, _ms(e.median_s), _ms(e.p90_s), str(e.count)] for e in events],
                           ["delegate", "event inside it", "median ms", "p90 ms", "runs"]))
    if result.delegate_events_note:
        lines.append(result.delegate_events_note)
    if result.etrecord_how:
        lines.append(f"{len(result.source_node_times or {})} source nodes timed through the ETRecord: "
                     + etrecord_words(result.etrecord_used, result.etrecord_how))
    return "\n".join(lines)


def readable(result: RunResult) -> str:
    if result.etdump:
        return _recorded(result)
    inputs = result.inputs or Inputs(source="")
    lines = [f"{result.program} on {result.device} ({inputs.source} inputs"
             + (f", {', '.join(f'{k}={v}' for k, v in inputs.sizes.items())})" if inputs.sizes else ")")]
    if inputs.note:  # an AOTInductor package's inputs, made from its wrapper's input checks
        lines.append(f"inputs {inputs.note}")
    rows = [[o["name"], dtype_text(o) if o["kind"] == "tensor" else o["kind"],
             "x".join(map(str, o.get("shape", []))) or "scalar",
             _stat(o.get("min")), _stat(o.get("max")), _stat(o.get("mean")), str(o.get("nan", "")),
             str(o.get("inf", ""))] for o in result.outputs or []]
    lines.append(table(rows, ["output", "dtype", "shape", "min", "max", "mean", "nan", "inf"]))
    lat = result.latency
    if lat is not None:
        lines.append(f"latency: median {_ms(lat.median_s)} ms, min {_ms(lat.min_s)}, max {_ms(lat.max_s)}, "
                     f"IQR {_ms(lat.iqr_s)} ({lat.runs} runs after {lat.warmup} warm-up)")
    for build, label in ((result.compile, "torch.compile"), (result.aoti, "AOTInductor")):
        if build is not None:
            d = build.difference
            lines.append(f"{label}: median {_ms(build.latency.median_s)} ms ({build.speedup:.2f}x eager), "
                         f"built in {build.compile_s:.1f} s, max abs diff {d.max_abs}, max rel diff {d.max_rel}")
    if result.hottest:
        lines.append(table([[h.node, _ms(h.seconds)] for h in result.hottest], ["node", "ms"]))
    if result.etrecord_how:  # a .pte timed by the source's nodes: which ETRecord mapped it
        lines.append(f"{len(result.source_node_times or {})} source nodes timed through the ETRecord: "
                     + etrecord_words(result.etrecord_used, result.etrecord_how))
    if result.kernel_times:  # an AOTInductor package's kernels, with the program nodes each computes
        kernels = result.kernel_times[:10]
        lines.append(table([[k.kernel, _ms(k.seconds), ", ".join(k.nodes)] for k in kernels],
                           ["kernel", "ms", "nodes"]))
    if result.kernel_times_note:
        lines.append(result.kernel_times_note)
    return "\n".join(lines)
