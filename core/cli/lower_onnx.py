"""`pt2-viewer lower SOURCE.pt2 --to onnx -o OUT.onnx [--json]`: the `lower_onnx` job from a terminal (core/cli/lower.py
hands `--to onnx` here).

Writes OUT.onnx (default: FILE's name with `.lowered.onnx`, beside it, so a `.onnx` the user exported themselves is
never the default) and says, for every call_function node of the source, the ONNX nodes it became, or `fused` with
the rewrite rule, or `dropped`. `--json` prints exactly `{"onnx", "opset", "dynamic_dims", "nodes"}`, each node
`{"node", "target", "fate", "onnx", "rule"?}`. The job runs in the worker; its own files go to a temp folder.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from pt2_viewer.core.cli.jobs import finish, run_in_worker, table, trust_fields
from pt2_viewer.core.cli.output import print_json
from pt2_viewer.core.jobs.schemas.onnx_lower import OnnxLowerRequest, OnnxLowerResult


def default_output(file: Path) -> Path:
    return file.with_name(f"{file.stem}.lowered.onnx")


def main(args: argparse.Namespace) -> int:
    output = (args.output or default_output(args.file)).absolute()
    request = OnnxLowerRequest(program=str(args.file.absolute()), output=str(output), program_name=args.program,
                               preload=str(args.preload) if args.preload else None, **trust_fields(args))
    with tempfile.TemporaryDirectory(prefix="pt2v-lower-onnx-") as work:
        result = run_in_worker("lower_onnx", request, Path(work), args, OnnxLowerResult)
    if args.json and result.ok:
        print_json(delivered(result))
        return 0
    return finish(result, args.json, readable)


def delivered(result: OnnxLowerResult) -> dict[str, Any]:
    """What `--json` prints of a lowering that worked: exactly these keys, in this order (docs/onnx.md)."""
    return {"onnx": result.onnx, "opset": result.opset, "dynamic_dims": result.dynamic_dims,
            "nodes": [r.to_json() for r in result.nodes or []]}


def readable(result: OnnxLowerResult) -> str:
    rows = result.nodes or []
    dims = f", dynamic dims {', '.join(result.dynamic_dims)}" if result.dynamic_dims else ""
    lines = [f"wrote {result.onnx} (ONNX opset {result.opset}{dims})", result.counts()]
    if rows:
        lines.append(table([[r.node, r.target, r.became()] for r in rows],
                           ["source node", "op", "became"]))
    return "\n".join(lines)

