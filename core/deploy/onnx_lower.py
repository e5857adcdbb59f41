"""The `lower_onnx` job: lower a `.pt2` program to ONNX with torch's own exporter (`torch.onnx.export(ep,
dynamo=True)`, onnxscript's optimizer included), and say for every call_function node of the source what it became.

The program is exported as it was loaded, so its dynamic dims stay dynamic: the `ExportedProgram`'s range
constraints are its dynamic shapes, and the ONNX inputs name them (`s77`). The exporter decomposes the program first;
each node of that decomposition keeps torch's `from_node` provenance, the name of the `.pt2` node it was made from.
That is exact where the heuristics of core/onnx/linking.py are not, so it is written into the file: every ONNX node
gets `pkg.pt2_viewer.source_nodes` (core/onnx/viewer_links.py), and the window's pipeline view links by it.

A source node's fate (core/jobs/schemas/onnx_lower.py `SourceFate`):
- `onnx`: the ONNX nodes whose FX node it was made from (with `rule` where a rewrite rule remade them alone:
  `MaterializeReshapeShape`);
- `fused`: it has no node of its own and a neighbour in the source graph (a user or an input) has one that a rewrite
  rule (`pkg.onnxscript.rewriter.rule_name`, e.g. `FuseBatchNormIntoConv`) made: the rule that took it in; and that
  neighbour is `fused` too, into the same nodes (a Conv and its BatchNorm);
- `dropped`: neither (folded into a constant, an identity removed, an assertion).

Request: `program`, `program_name`, `preload`, the trust fields, `output` (default OUT/lowered.onnx), `optimize`.
The file is written atomically (with its external data, past 2 GB). Without onnxscript the job says which command
installs it.
"""
from __future__ import annotations

import contextlib
import io
import os
import time
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.lower import Emit, load_source, progress
from pt2_viewer.core.deploy.provenance import call_nodes, target_text
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.kinds import LOWER_ONNX
from pt2_viewer.core.jobs.loading import captured_torch_logs
from pt2_viewer.core.jobs.schemas.onnx_lower import (
    BECAME,
    DROPPED,
    FUSED,
    OnnxLowerRequest,
    OnnxLowerResult,
    SourceFate,
)
from pt2_viewer.core.jobs.typed_job import TypedJob, reporting
from pt2_viewer.core.onnx.provenance import FX_NODE, RULE_NAME, fx_node_name
from pt2_viewer.core.onnx.viewer_links import MODEL_SOURCE, SOURCE_NODES, join_names
from pt2_viewer.core.util.files import write_atomically

INSTALL_HINT = "pip install pt2-viewer[onnx] (onnxscript and onnxruntime for the worker's Python)"


def run(request: OnnxLowerRequest, out: Path, emit: Emit) -> OnnxLowerResult:
    return reporting(_run, request, out, emit, OnnxLowerResult(ok=False), finished_only=("seconds",))


run_job = TypedJob(run, LOWER_ONNX)  # the worker's entry: the `lower_onnx` job of core/jobs/kinds.py


def export(ep: Any, optimize: bool, log: list[str]) -> Any:
    """`torch.onnx.export(ep, dynamo=True)`: the ONNXProgram, its printed progress kept in `log`."""
    try:
        import onnxscript  # noqa: F401 (the exporter needs it; its absence is said here, with the fix)
        import torch
    except ImportError as e:
        raise JobFailure("missing_module", f"Lowering to ONNX needs onnxscript, which this Python does not have "
                         f"({first_line(e)}).", INSTALL_HINT) from None
    printed = io.StringIO()
    try:
        with captured_torch_logs(log), contextlib.redirect_stdout(printed):
            program = torch.onnx.export(ep, dynamo=True, optimize=optimize, report=False)
    except Exception as e:  # the exporter's errors have no common base class
        import traceback

        raise JobFailure("lower", f"torch.onnx.export could not export the program: {type(e).__name__}: "
                         f"{first_line(e)}", "The log has the exporter's full message.",
                         traceback.format_exc()) from e
    finally:
        log += [line for line in printed.getvalue().splitlines() if line.strip()]
    if program is None:
        raise JobFailure("lower", "torch.onnx.export returned no ONNX program.", "The log has the exporter's messages.")
    return program


def source_of(fx_node: Any, sources: set[str]) -> str | None:
    """The `.pt2` node an FX node of the exporter's decomposition was made from: the nearest node of its `from_node`
    chain that the source program has (the chain may go on past it, into the program the `.pt2` was made from)."""
    frontier = list(reversed(fx_node.meta.get("from_node") or []))
    seen = 0
    while frontier and seen < 10_000:
        step = frontier.pop(0)
        seen += 1
        if step.name in sources:
            return str(step.name)
        frontier += list(reversed(step.from_node or []))
    return fx_node.name if fx_node.name in sources else None


def decomposed_nodes(program: Any) -> dict[str, Any]:
    """The exporter's decomposed program's nodes by name, its subgraphs' too (the top graph's win a clash)."""
    nodes: dict[str, Any] = {}
    modules = [m for m in program.exported_program.graph_module.modules() if hasattr(m, "graph")]
    for module in reversed(modules):  # the root module comes first: last written
        nodes.update({n.name: n for n in module.graph.nodes if n.op == "call_function"})
    return nodes


def onnx_nodes(model: Any) -> list[Any]:
    from onnx_ir import traversal

    return list(traversal.RecursiveGraphIterator(model.graph))


def link(program: Any, ep: Any) -> dict[str, list[Any]]:
    """Source node -> the ONNX nodes made from it (torch's `from_node`), each ONNX node tagged with its source."""
    sources = {n.name for n in ep.graph.nodes if n.op == "call_function"}
    decomposed = decomposed_nodes(program)
    made: dict[str, list[Any]] = {}
    for node in onnx_nodes(program.model):
        fx = decomposed.get(fx_node_name(node.metadata_props.get(FX_NODE, "")) or "")
        source = source_of(fx, sources) if fx is not None else None
        if source is not None:
            made.setdefault(source, []).append(node)
    return made


def fates(ep: Any, made: dict[str, list[Any]]) -> list[SourceFate]:
    """Each call_function node of the source and what it became (the module docstring says how)."""
    rows = []
    for n in call_nodes(ep.graph):
        own = made.get(n.name, [])
        rule = next((r for o in own if (r := o.metadata_props.get(RULE_NAME))), None)
        if own:
            rows.append(SourceFate(node=n.name, target=target_text(n.target), fate=BECAME,
                                   onnx=[o.name for o in own], rule=rule))
            continue
        neighbours = [*n.users, *n.all_input_nodes]
        ruled = [o for m in neighbours for o in made.get(m.name, []) if o.metadata_props.get(RULE_NAME)]
        if ruled:
            rows.append(SourceFate(node=n.name, target=target_text(n.target), fate=FUSED,
                                   onnx=list(dict.fromkeys(o.name for o in ruled)),
                                   rule=ruled[0].metadata_props[RULE_NAME]))
        else:
            rows.append(SourceFate(node=n.name, target=target_text(n.target), fate=DROPPED))
    shared = {o for r in rows if r.fate == FUSED for o in r.onnx}
    for r in rows:  # a rule that took another op into this one's nodes fused them; one that rewrote them alone did not
        if r.fate == BECAME and r.rule and shared & set(r.onnx):
            r.fate = FUSED
    return rows


def tag(program: Any, rows: list[SourceFate], source: str) -> None:
    """Write each ONNX node's source nodes into the model (`pkg.pt2_viewer.source_nodes`, in the source's order,
    those fused into it included), and the source program into the model's metadata."""
    by_onnx: dict[str, list[str]] = {}
    for row in rows:
        for name in row.onnx:
            by_onnx.setdefault(name, []).append(row.node)
    for node in onnx_nodes(program.model):
        names = by_onnx.get(node.name or "")
        if names:
            node.metadata_props[SOURCE_NODES] = join_names(names)
    program.model.metadata_props[MODEL_SOURCE] = source


def dynamic_dims(model: Any) -> list[str]:
    dims = (d for v in model.graph.inputs if v.shape is not None for d in v.shape)
    return list(dict.fromkeys(str(d) for d in dims if not isinstance(d, int)))


def save(program: Any, path: Path) -> None:
    """Write the model atomically; external data (a model past 2 GB) is moved beside it first, under its name."""
    def write(tmp: str) -> None:
        program.save(tmp)
        for extra in Path(tmp).parent.iterdir():
            if extra.name != path.name:
                os.replace(extra, path.parent / extra.name)

    write_atomically(path, write)


def _run(request: OnnxLowerRequest, out: Path, emit: Emit, report: OnnxLowerResult) -> None:
    if not request.program:
        raise JobFailure("request", "The request names no program.", "Pass the .pt2 path as 'program'.")
    seconds: dict[str, float] = {}
    loaded = load_source(request, emit, report, seconds)
    t = time.perf_counter()
    progress(emit, "export", 0.1, "Exporting to ONNX with torch.onnx.export (dynamo=True)")
    program = export(loaded.ep, request.optimize, report.log)
    seconds["export"] = time.perf_counter() - t
    t = time.perf_counter()
    progress(emit, "link", 0.8, "Following each ONNX node's from_node to the program's nodes")
    rows = fates(loaded.ep, link(program, loaded.ep))
    tag(program, rows, f"{loaded.path.name} [{loaded.name}]")
    progress(emit, "save", 0.9, "Writing the .onnx")
    path = Path(request.output or out / "lowered.onnx")
    save(program, path)
    seconds["save"] = time.perf_counter() - t
    kept = sum(r.fate != DROPPED for r in rows)
    progress(emit, "done", 1.0, f"{kept} of {len(rows)} ops in the ONNX graph")
    report.onnx, report.nodes = str(path), rows
    report.opset = program.model.opset_imports.get("")
    report.dynamic_dims = dynamic_dims(program.model)
    report.seconds = seconds
