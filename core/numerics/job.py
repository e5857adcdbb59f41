"""The numerics job: run a program (the reference) and a candidate on the same inputs, compare them node by node,
and find the first divergence (core/numerics/metrics.py).

Request (JSON): `program`, `candidate` ("core" | "functional" | a table .py | "bf16" | "fp16" | "cuda" | "compile" |
"aoti" | "onnx" | a FILE.pte, AOTInductor FILE.pt2 or FILE.onnx), optional `table_name`, `program_name`, `preload`,
`trust`, `inputs` ("auto" | "sample" | "generated"),
`dims`, `seed`, `threshold` (default 1e-2, on the relative error), `budget_mb` (reference values held in memory before
spilling to disk; default 1024), `top` (worst nodes listed; default 20), `save_candidate` (write a decomposed
candidate and its node mapping into OUT for the compare view).

How each candidate is compared:
- bf16 / fp16 / cuda: the same graph with floating inputs, parameters and buffers cast down (or moved to the GPU),
  stepped in lockstep with the reference: node names match and only live values are held;
- core / functional / table: the decomposed program; the reference runs first and keeps, in memory up to the budget
  and on disk past it, only the values a decomposed node will be compared with (through torch's provenance mapping);
- compile / aoti: torch gives no intermediate values, so only the outputs are compared (`per_node` false);
- FILE.onnx / onnx (the program exported first): ONNX Runtime's values, op by op (core/numerics/onnx_run.py).
The result is described in docs/numerics.md.
"""
from __future__ import annotations

import math
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.compare.mapping import write_mapping
from pt2_viewer.core.decompose.job import decompose, decomposition_table, mapping_path_for
from pt2_viewer.core.decompose.provenance import provenance_mapping
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.kinds import NUMERICS
from pt2_viewer.core.jobs.loading import captured_torch_logs, load_program, trust_options
from pt2_viewer.core.jobs.schemas.numerics import (
    DivergenceRecord,
    Memory,
    NodeErrorRecord,
    NumericsInputs,
    NumericsRequest,
    NumericsResult,
)
from pt2_viewer.core.jobs.typed_job import TypedJob, reporting
from pt2_viewer.core.numerics import aoti
from pt2_viewer.core.numerics.capture import (
    exits,
    inputs_of,
    low_precision_interpreter,
    shown_name,
    shown_order,
    source_nodes,
    steps,
)
from pt2_viewer.core.numerics.guarded import copied, guarded, guarded_steps, own_inputs, progress, start_args
from pt2_viewer.core.numerics.metrics import NodeError, compare_values, first_divergence, worst
from pt2_viewer.core.numerics.onnx_run import NOTE as ONNX_NOTE
from pt2_viewer.core.numerics.onnx_run import compare_onnx
from pt2_viewer.core.numerics.pte import compare_pte
from pt2_viewer.core.numerics.script_reference import compare_script
from pt2_viewer.core.numerics.store import MemoryUse, ReferenceStore
from pt2_viewer.core.run.candidate import candidate_outputs
from pt2_viewer.core.run.inputs import Inputs, check_inputs
from pt2_viewer.core.run.job import choose_inputs, cuda_status  # the same inputs Run uses
from pt2_viewer.core.run.tensor_stats import flat_outputs
from pt2_viewer.core.util.files import save_program, write_atomically

Emit = Callable[[dict[str, Any]], None]
PRECISIONS = ("bf16", "fp16")
DECOMPOSITIONS = ("core", "functional")
OUTPUTS_ONLY = ("compile", "aoti", "package")  # package: an AOTInductor FILE.pt2 (a FILE.pte: core/numerics/pte.py)
CANDIDATES = (*DECOMPOSITIONS, *PRECISIONS, "cuda", "compile", "aoti", "onnx")
OUTPUTS_ONLY_NOTE = ("torch.compile, AOTInductor and ExecuTorch give no intermediate values: only the outputs are "
                     "compared.")


def run(request: NumericsRequest, out: Path, emit: Emit) -> NumericsResult:
    cuda_ok, why = cuda_status()
    return reporting(_run, request, out, emit, NumericsResult(ok=False, cuda_available=cuda_ok,
                                                              cuda_unavailable_reason=why))


run_job = TypedJob(run, NUMERICS)  # the worker's entry: the `numerics` job of core/jobs/kinds.py


def candidate_kind(candidate: str) -> str:
    """'table' for a .py file, else the candidate itself if known; `JobFailure` otherwise."""
    if candidate.endswith(".py"):
        return "table"
    if candidate.endswith((".pte", ".pt2")):  # what the program became (core/run/candidate.py)
        return "pte" if candidate.endswith(".pte") else "package"
    if candidate.endswith(".onnx"):  # an ONNX model, run by ONNX Runtime (core/numerics/onnx_run.py)
        return "onnx"
    if candidate not in CANDIDATES:
        raise JobFailure("request", f"Unknown candidate '{candidate}'.",
                         f"Choose one of {', '.join(CANDIDATES)}, or name a decomposition table .py file.")
    return candidate


def _cast(args: list[Any], dtype: Any) -> list[Any]:
    import torch

    return [a.detach().to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]


def _run(request: NumericsRequest, out: Path, emit: Emit, report: NumericsResult) -> None:
    import torch
    import torch.utils._pytree as pytree

    if request.script:
        return _script(request.script, request, emit, report)
    if request.program is None:
        raise JobFailure("request", "The request names no program.", "Pass the .pt2 path as 'program'.")
    candidate = request.candidate
    kind = candidate_kind(candidate)
    threshold = request.threshold
    if not threshold >= 0:
        raise JobFailure("request", f"The threshold {threshold} is not a non-negative number.", "Use e.g. 0.01.")
    if kind == "cuda" and not report.cuda_available:
        raise JobFailure("cuda", f"CUDA is not available: {report.cuda_unavailable_reason}.",
                         "Compare another candidate, or run on a machine with an NVIDIA GPU and a CUDA build of torch.")
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    progress(emit, "load", 0.0, f"Loading {Path(request.program).name}")
    loaded = load_program(request.program, request.program_name, request.preload, **trust_options(request))
    report.log += loaded.log
    inputs = choose_inputs(request, loaded)
    sizes = check_inputs(loaded.ep, inputs.args, inputs.kwargs)
    flat_user, _ = pytree.tree_flatten((inputs.args, inputs.kwargs))
    seconds["load"] = time.perf_counter() - t0
    report.program, report.program_name, report.candidate, report.kind = str(loaded.path), loaded.name, candidate, kind
    report.threshold, report.inputs = threshold, NumericsInputs(source=inputs.source, sizes=sizes)
    report.imported, report.imports = loaded.imported, loaded.import_details
    budget = int(float(request.budget_mb) * 2**20)
    memory = MemoryUse()
    ep = loaded.ep
    order, ins = shown_order(ep.graph), inputs_of(ep.graph)
    t = time.perf_counter()
    extras: dict[str, dict[str, Any]] = {}  # a .pte's rows: the instruction, delegate and source group compared
    traced = None  # AOTInductor op by op: (errors, the rows' kernel and group)
    with torch.no_grad():
        if kind == "onnx":
            errors, extras = compare_onnx(ep, candidate, inputs.args, inputs.kwargs, loaded.name, out, emit, report,
                                          memory)
        elif kind == "pte":
            errors, extras = compare_pte(ep, Path(candidate), inputs.args, inputs.kwargs, request, out, emit, report)
        elif kind in ("aoti", "package") and (traced := aoti.compare_aoti(
                kind, candidate, ep, flat_user, inputs.args, inputs.kwargs, out, emit, report, request)):
            errors, extras = traced  # AOTInductor op by op (core/numerics/aoti.py)
        elif kind in OUTPUTS_ONLY:
            errors = _outputs_only(kind, ep, inputs, out, emit, report, candidate, request)
            order, ins = list(errors), {}
        elif kind in (*PRECISIONS, "cuda"):
            errors = _lockstep(kind, ep, flat_user, emit)
        else:
            errors = _decomposed(kind, candidate, ep, flat_user, out, budget, memory, emit, request, report, seconds)
    seconds["compare"] = time.perf_counter() - t - seconds.get("decompose", 0.0)
    memory.peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    outputs_only = kind in OUTPUTS_ONLY and traced is None
    found = first_divergence(order, errors, ins, threshold,
                             sources=source_nodes(ep.graph) if not outputs_only else ())
    nodes = [errors[n] for n in order if n in errors]
    compared = sum(1 for e in nodes if e.compared)  # a .pte's row marked not compared is listed, not counted
    progress(emit, "done", 1.0, f"Compared {compared} nodes"
             + (f"; first divergence at {found.node}" if found else "; no divergence"))
    report.per_node = not outputs_only
    report.note = OUTPUTS_ONLY_NOTE if outputs_only else aoti.NOTE if traced else ONNX_NOTE if kind == "onnx" else ""
    report.compared = compared
    report.not_compared = [n for n in order if n not in errors or not errors[n].compared] if not outputs_only else []
    report.first_divergence = DivergenceRecord.from_json(found.to_json()) if found else None
    report.worst = [_record(e, extras) for e in worst(nodes, request.top)]
    report.nodes = [_record(e, extras) for e in nodes]
    report.memory, report.seconds = Memory.from_json(memory.to_json()), seconds


def _record(e: NodeError, extras: dict[str, dict[str, Any]]) -> NodeErrorRecord:
    """A compared node's row as the result holds it (a .pte's or a kernel's extras after the metrics)."""
    return NodeErrorRecord.from_json({**e.to_json(), **extras.get(e.node, {})})


def _every(total: int) -> int:
    return max(total // 50, 1)


def _lockstep(kind: str, ep: Any, flat_user: list[Any], emit: Emit) -> dict[str, NodeError]:
    """Step the reference and the cast-down (or GPU) copy of the same graph together; node names match."""
    import torch

    ref_args = start_args(ep, flat_user)
    if kind == "cuda":
        from torch.export.passes import move_to_device_pass

        cand_ep = guarded("the move to CUDA", lambda: move_to_device_pass(ep, "cuda"))
        cand_gm = cand_ep.graph_module
        cand_args = [a.to("cuda") if isinstance(a, torch.Tensor) else a for a in start_args(cand_ep, flat_user)]
        interp = None
        label = "the program on CUDA"
    else:
        dtype = torch.bfloat16 if kind == "bf16" else torch.float16
        cand_gm, cand_args = ep.graph_module, _cast(start_args(ep, flat_user), dtype)
        interp = low_precision_interpreter(cand_gm, dtype)
        label = f"the program in {kind}"
    total = len(ep.graph.nodes)
    every = _every(total)
    progress(emit, "compare", 0.1, f"Running the program and {label} together ({total} nodes)")
    errors: dict[str, NodeError] = {}
    ref_steps, cand_steps = steps(ep.graph_module, ref_args), steps(cand_gm, cand_args, interp=interp)
    k = 0
    while True:
        r = guarded("the reference", lambda: next(ref_steps, None))
        c = guarded(label, lambda: next(cand_steps, None))
        if r is None or c is None:
            break
        (rn, rv), (cn, cv) = r, c
        k += 1
        if k % every == 0:
            progress(emit, "compare", 0.1 + 0.85 * k / total, f"Node {k} of {total}: {rn.name}")
        if rn.op == "output" or shown_name(rn) != rn.name:
            continue
        e = compare_values(rn.name, cn.name, rv, cv)
        if e is not None:
            errors[rn.name] = e
    return errors


def _decomposed(kind: str, candidate: str, ep: Any, flat_user: list[Any], out: Path, budget: int,
                memory: MemoryUse, emit: Emit, request: NumericsRequest, report: NumericsResult,
                seconds: dict[str, float]) -> dict[str, NodeError]:
    """Decompose, run the reference keeping only mapped values (spilling past the budget), then run the candidate and
    compare each mapped node as it is computed."""
    t = time.perf_counter()
    progress(emit, "decompose", 0.05, f"Decomposing ({kind})")
    table = decomposition_table(kind, candidate if kind == "table" else None, request.table_name)
    after = decompose(ep, table, report.log)
    mapping = provenance_mapping(ep.graph, after.graph, before_label=f"{Path(str(report.program)).name}",
                                 after_label=f"{candidate}")
    exit_to_ref = exits([(k.before, k.after) for k in mapping.links], after.graph)
    wanted = set(exit_to_ref.values())
    seconds["decompose"] = time.perf_counter() - t
    if request.save_candidate:

        output = out / "candidate.pt2"
        with captured_torch_logs(report.log):
            save_program(after, output)
        write_mapping(mapping, mapping_path_for(output))
        report.candidate_program, report.mapping = str(output), str(mapping_path_for(output))

    store = ReferenceStore(out / "spill", budget, memory)
    total = len(ep.graph.nodes) + len(after.graph.nodes)
    every = _every(total)
    k = 0
    progress(emit, "reference", 0.2, f"Running the reference ({len(ep.graph.nodes)} nodes)")
    for node, value in guarded_steps("the reference", steps(ep.graph_module, start_args(ep, flat_user))):
        k += 1
        if k % every == 0:
            progress(emit, "reference", 0.2 + 0.75 * k / total, f"Reference node {k}: {node.name}")
        if node.name in wanted and node.op != "output":
            store.put(node.name, copied(value))  # a later in-place op (relu_) must not change it
    errors: dict[str, NodeError] = {}
    for node, value in guarded_steps("the decomposed program", steps(after.graph_module, start_args(after, flat_user))):
        k += 1
        if k % every == 0:
            progress(emit, "candidate", 0.2 + 0.75 * k / total, f"Candidate node {k}: {node.name}")
        ref = exit_to_ref.get(node.name)
        if ref is None or ref not in store:
            continue
        e = compare_values(ref, node.name, store.pop(ref), value)
        if e is not None:
            errors[ref] = e
    return errors


def _outputs_only(kind: str, ep: Any, inputs: Inputs, out: Path, emit: Emit, report: NumericsResult,
                  candidate: str, request: NumericsRequest) -> dict[str, NodeError]:
    import torch

    module = ep.module()
    progress(emit, "reference", 0.1, "Running the program")
    ref_args, ref_kwargs = own_inputs(inputs.args, inputs.kwargs)  # the candidate keeps the inputs as they were
    reference = guarded("the program", lambda: module(*ref_args, **ref_kwargs))
    if kind == "compile":
        progress(emit, "compile", 0.2, "Compiling with torch.compile (slow on CPU)")
        compiled = torch.compile(module)
        with captured_torch_logs(report.log):
            result = guarded("the torch.compile build", lambda: compiled(*inputs.args, **inputs.kwargs))
    elif kind in ("pte", "package"):
        progress(emit, "candidate", 0.3, f"Running {Path(candidate).name}")
        result = guarded(Path(candidate).name, lambda: candidate_outputs(kind, candidate, inputs.args, inputs.kwargs,
                                                                          request, report.log))
    else:

        package = out / "model.aoti.pt2"
        progress(emit, "aoti_compile", 0.2, "Compiling and packaging with AOTInductor (tens of seconds)")
        try:
            with captured_torch_logs(report.log):
                write_atomically(package, lambda tmp: torch._inductor.aoti_compile_and_package(ep, package_path=tmp))
        except Exception as e:
            raise JobFailure("aoti", f"AOTInductor could not compile the program: {first_line(e)}",
                             "The log has the full message.") from e
        runner = guarded("the AOTInductor package", lambda: torch._inductor.aoti_load_package(str(package)))
        result = guarded("the AOTInductor package", lambda: runner(*inputs.args, **inputs.kwargs))
    errors: dict[str, NodeError] = {}
    ref_leaves, cand_leaves = flat_outputs(reference), flat_outputs(result)
    for (name, a), (_, b) in zip(ref_leaves, cand_leaves):
        node_error = compare_values(name, name, a, b)
        if node_error is not None:
            errors[name] = node_error
    if len(ref_leaves) != len(cand_leaves):
        errors["out"] = NodeError("out", "out", math.inf, math.inf, math.nan, -math.inf, 0, 0,
                                  note=f"{len(ref_leaves)} outputs vs {len(cand_leaves)}")
    return errors


def _script(script_file: str, request: NumericsRequest, emit: Emit, report: NumericsResult) -> None:
    """A model script: its eager model is the reference, each submodule's output against the exported program's value
    where that module's call ends (core/numerics/script_reference.py). The first divergence is the first module, in
    the order the program computes them, over the threshold."""

    threshold = request.threshold
    script = Path(script_file)
    t = time.perf_counter()
    progress(emit, "export", 0.1, f"Importing {script.name}, exporting its model and running both")
    order, errors, not_compared = compare_script(script)
    found = first_divergence(order, errors, {}, threshold)
    nodes = [errors[p] for p in order if p in errors]
    progress(emit, "done", 1.0, f"Compared {len(nodes)} modules")
    memory = MemoryUse(peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    report.program, report.program_name, report.candidate, report.kind = str(script), "model", "export", "script"
    report.threshold, report.inputs, report.per_node = threshold, NumericsInputs(source="example"), True
    report.note = ("The eager model is the reference: each module's output against the program's value where that "
                   "module's call ends (nodes are named by module path).")
    report.compared, report.not_compared = len(nodes), not_compared
    report.first_divergence = DivergenceRecord.from_json(found.to_json()) if found else None
    report.worst = [_record(e, {}) for e in worst(nodes, request.top)]
    report.nodes = [_record(e, {}) for e in nodes]
    report.memory, report.seconds = Memory.from_json(memory.to_json()), {"compare": time.perf_counter() - t}
