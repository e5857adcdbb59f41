"""The numerics of a `.pte` op by op: its run's intermediate values (ETDump and its debug buffer) against the source
program's, matched through the ETRecord's debug handles with ExecuTorch's own Inspector.

- The `.pte` runs with ETDump on (core/deploy/etdump.py); the Inspector gives each instruction's and each delegate
  call's value keyed by debug handles, merged where they overlap, as `calculate_numeric_gap` compares them.
- The ETRecord's exported program is the source: the Inspector propagates the debug handles back onto its nodes
  (`propagate_back_debug_handle`). The source `.pt2` itself must be that program (same call_function nodes and
  targets); its nodes get those handles, and it runs under ExecuTorch's `IntermediateOutputCapturer`, on the same
  inputs as the `.pte`, so the reference holds the user's weights.
- ExecuTorch's `map_runtime_aot_intermediate_outputs` pairs each runtime value with the source value of the same
  handles; a row is named by the group's last source node (where its value leaves the group), the candidate by the
  `.pte` graph's node (core/pte/program_map.py), and a delegate call's row says so (`delegate`, `group`).
- Without an ETRecord, the source is lowered again in the worker with the backend the file uses (XNNPACK when it
  holds an XNNPACK delegate, else portable), keeping the ETRecord; the user's file is compared only when its
  instructions (operators and delegate calls, in order) are those of the fresh lowering, else refused.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.etdump import inspect, run_with_etdump, runtime_values
from pt2_viewer.core.deploy.etrecord import load_etrecord
from pt2_viewer.core.deploy.lower import lower
from pt2_viewer.core.deploy.pte_map import (
    check_same_program,
    handles_to_nodes,
    instruction_names,
    instruction_signature,
    pte_program,
    reference_handles,
)
from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.numerics.guarded import own_inputs
from pt2_viewer.core.numerics.metrics import NodeError, compare_values

Emit = Callable[[dict[str, Any]], None]
BACKENDS_RELOWERED = {"XnnpackBackend": "xnnpack"}


def _backend_of(program: Any, path: Path) -> str:
    backends = {str(n.target)[len("delegate."):] for n in program.graph.nodes
                if str(n.target).startswith("delegate.")}
    unknown = sorted(b for b in backends if b not in BACKENDS_RELOWERED)
    if unknown:
        raise JobFailure("mismatch", f"'{path.name}' holds a delegate of {', '.join(unknown)}, which the viewer "
                         "cannot lower again to map its instructions.", "Pass the ETRecord made with it "
                         "(--etrecord FILE.etrecord).")
    return "xnnpack" if backends else "portable"


def fresh_etrecord(ep: Any, pte: Path, program: Any, out: Path, log: list[str], emit: Emit) -> tuple[Any, str]:
    """Lower the source again with the file's backend; the parsed ETRecord and a sentence saying what was compared,
    or `JobFailure` ("mismatch") when the fresh lowering's instructions are not the file's."""
    from executorch.devtools.etrecord import parse_etrecord

    backend = _backend_of(program, pte)
    emit({"type": "progress", "stage": "lower", "fraction": 0.1,
          "message": f"No ETRecord: lowering the source to {backend} again to map {pte.name}'s instructions"})
    lowered = lower(ep, backend, log)
    fresh_pte, fresh_rec = out / "relowered.pte", out / "relowered.etrecord"
    fresh_pte.write_bytes(bytes(lowered.program.buffer))
    lowered.etrecord.save(str(fresh_rec))
    mine, theirs = instruction_signature(program), instruction_signature(pte_program(fresh_pte, program.name))
    if mine != theirs:
        first = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        at = (f"instruction {first}: {mine[first] if first < len(mine) else 'nothing'} in the file, "
              f"{theirs[first] if first < len(theirs) else 'nothing'} in the fresh lowering")
        raise JobFailure("mismatch", f"'{pte.name}' is not what lowering the source to {backend} gives now "
                         f"({len(mine)} instructions against {len(theirs)}; first difference at {at}), so its "
                         "instructions cannot be mapped back to the source's nodes.",
                         "Pass the ETRecord made when the file was lowered (--etrecord FILE.etrecord), or lower the "
                         "source again (pt2-viewer lower) and compare that.")
    return parse_etrecord(str(fresh_rec)), (f"{pte.name}, mapped through a fresh {backend} lowering of the source "
                                            f"whose {len(mine)} instructions match the file's")


def flat_inputs(ep: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The inputs in the program's own order (keyword inputs as its signature lists them): how the `.pte` and the
    source's flat graph both take them."""
    import torch.fx._pytree as fx_pytree

    return list(fx_pytree.tree_flatten_spec((args, kwargs), ep.call_spec.in_spec))


def reference_values(ep: Any, handles: dict[str, tuple[int, ...]], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> dict[tuple[int, ...], Any]:
    """The source's values keyed by debug handle: ExecuTorch's IntermediateOutputCapturer over the source program's
    module, its nodes given the handles the ETRecord's exported program carries (taken off again after)."""
    from executorch.devtools.inspector._intermediate_output_capturer import IntermediateOutputCapturer

    gm = ep.module()
    marked = []
    for n in gm.graph.nodes:
        if n.name in handles:
            n.meta["debug_handle"] = handles[n.name] if len(handles[n.name]) > 1 else handles[n.name][0]
            marked.append(n)
    try:
        return dict(IntermediateOutputCapturer(gm).run_and_capture(*flat_inputs(ep, args, kwargs)))
    finally:
        for n in marked:
            n.meta.pop("debug_handle", None)


Rows = tuple[dict[str, NodeError], dict[str, dict[str, Any]]]


def compare_pte(ep: Any, pte: Path, args: tuple[Any, ...], kwargs: dict[str, Any], request: NumericsRequest,
                out: Path, emit: Emit, report: NumericsResult) -> Rows:
    """Per-node errors of the `.pte` against the source `ep` (keyed by source node), and each row's extras
    (`delegate`, `group`, `instruction`)."""
    from executorch.devtools.inspector._inspector_utils import map_runtime_aot_intermediate_outputs

    program = pte_program(pte, request.method)
    work = out / "pte_numerics"
    work.mkdir(parents=True, exist_ok=True)
    if request.etrecord:
        name = Path(request.etrecord).name
        rec = load_etrecord(request.etrecord, work, request.trust, request.allow_imports)
        if rec.exported_program is None:
            raise JobFailure("mismatch", f"The ETRecord '{name}' holds no exported program "
                             "to map back to.", "Make it with generate_etrecord=True from the exported program.")
        check_same_program(rec.exported_program, ep, f"The ETRecord '{name}'")
        compared = f"{pte.name}, mapped through the ETRecord {name}"
    else:
        rec, compared = fresh_etrecord(ep, pte, program, work, report.log, emit)
    report.compared_program = compared
    emit({"type": "progress", "stage": "candidate", "fraction": 0.5,
          "message": f"Running {pte.name} with ETDump and its debug buffer"})
    run = run_with_etdump(pte, program.name, flat_inputs(ep, *own_inputs(args, kwargs)), work,
                          float(request.budget_mb))
    inspector = inspect(run, rec)
    handles = reference_handles(inspector)
    emit({"type": "progress", "stage": "reference", "fraction": 0.7, "message": "Running the source program"})
    ref = reference_values(ep, handles, *own_inputs(args, kwargs))  # the .pte ran on copies: not what it changed
    runtime = runtime_values(inspector)
    pairs = map_runtime_aot_intermediate_outputs(ref, {k: (v.value, v.num_outputs) for k, v in runtime.items()})
    order = {n.name: i for i, n in enumerate(ep.graph.nodes)}
    by_handle = handles_to_nodes(handles)
    names = instruction_names(program)
    errors: dict[str, NodeError] = {}
    extras: dict[str, dict[str, Any]] = {}
    for (aot_key, aot_value), (rt_key, rt_value) in pairs.items():
        group = sorted({n for h in aot_key for n in by_handle.get(h, [])}, key=lambda n: order.get(n, -1))
        if not group:
            continue
        node = group[-1]
        produced = runtime.get(tuple(rt_key))
        instruction = produced.instruction if produced else -1
        e = compare_values(node, names.get(instruction, "?"), aot_value, rt_value)
        if e is None:
            continue
        errors[node] = e
        extras[node] = {"group": group, "instruction": instruction,
                        "delegate": produced.delegate if produced else ""}
    return errors, extras
