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
- The ETRecord is the one named, else the one beside the file, else a fresh lowering's whose instructions equal the
  file's (core/deploy/etrecord_choice.py); the result says which (`etrecord_used`, `etrecord_how`).
- A logged value is compared in the source's shape where the edge program makes one the other through views alone,
  and in its dim order; where nothing stands for the source's value, the row is "not compared"
  (core/numerics/pte_values.py).
- With `etdump` (and `debug_buffer`), the values are those a device recorded (core/deploy/etdump_import.py): nothing
  runs here but the source, on the inputs the request names, which the device is taken to have run; the pairing is
  the same, and an ETDump of another file is refused.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.etdump import inspect, run_with_etdump, runtime_values
from pt2_viewer.core.deploy.etdump_import import check_recorded_program, read_recording, recorded_run
from pt2_viewer.core.deploy.etrecord_choice import Trust, choose_etrecord
from pt2_viewer.core.deploy.pte_map import handles_to_nodes, instruction_names, pte_program, reference_handles
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.numerics.guarded import own_inputs
from pt2_viewer.core.numerics.metrics import NodeError, compare_values, not_compared
from pt2_viewer.core.numerics.pte_values import Comparable, EdgeGroups, comparable, dim_orders

Emit = Callable[[dict[str, Any]], None]


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


def _candidate_run(ep: Any, pte: Path, program: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                   request: NumericsRequest, work: Path, emit: Emit, etrecord: Any) -> Any:
    """The Inspector over the `.pte`'s values: a run here with ETDump and its debug buffer, or the ETDump and debug
    buffer recorded on a device (`request.etdump`, core/deploy/etdump_import.py), refused when not of this file."""
    if request.etdump:
        emit({"type": "progress", "stage": "candidate", "fraction": 0.5,
              "message": f"Reading {Path(request.etdump).name}, recorded from {pte.name}"})
        recorded = recorded_run(request.etdump, request.debug_buffer)
        inspector = read_recording(recorded, etrecord, values=True)
        check_recorded_program(inspector, program, pte, recorded.etdump, True)
        return inspector
    emit({"type": "progress", "stage": "candidate", "fraction": 0.5,
          "message": f"Running {pte.name} with ETDump and its debug buffer"})
    run = run_with_etdump(pte, program.name, flat_inputs(ep, *own_inputs(args, kwargs)), work,
                          float(request.budget_mb))
    return inspect(run, etrecord)


Rows = tuple[dict[str, NodeError], dict[str, dict[str, Any]]]


def compare_pte(ep: Any, pte: Path, args: tuple[Any, ...], kwargs: dict[str, Any], request: NumericsRequest,
                out: Path, emit: Emit, report: NumericsResult) -> Rows:
    """Per-node errors of the `.pte` against the source `ep` (keyed by source node), and each row's extras
    (`delegate`, `group`, `instruction`)."""
    from executorch.devtools.inspector._inspector_utils import map_runtime_aot_intermediate_outputs

    program = pte_program(pte, request.method)
    work = out / "pte_numerics"
    work.mkdir(parents=True, exist_ok=True)
    chosen = choose_etrecord(pte, program.name, request.etrecord, ep, work,
                             Trust(request.trust, request.allow_imports), report.log, emit)
    report.compared_program, report.etrecord_used, report.etrecord_how = chosen.compared, chosen.path, chosen.how
    inspector = _candidate_run(ep, pte, program, args, kwargs, request, work, emit, chosen.etrecord)
    if request.etdump:
        report.compared_program = (f"{chosen.compared}; its values recorded in {Path(request.etdump).name}, on "
                                   f"inputs taken to be the source's {request.inputs} inputs")
    handles = reference_handles(inspector)
    emit({"type": "progress", "stage": "reference", "fraction": 0.7, "message": "Running the source program"})
    ref = reference_values(ep, handles, *own_inputs(args, kwargs))  # the .pte ran on copies: not what it changed
    runtime = runtime_values(inspector)
    pairs = map_runtime_aot_intermediate_outputs(ref, {k: (v.value, v.num_outputs) for k, v in runtime.items()})
    order = {n.name: i for i, n in enumerate(ep.graph.nodes)}
    by_handle = handles_to_nodes(handles)
    names = instruction_names(program)
    shown = program.graph.node_by_name
    edges = EdgeGroups(chosen.etrecord, program.name, ep.graph, handles)
    errors: dict[str, NodeError] = {}
    extras: dict[str, dict[str, Any]] = {}
    for (aot_key, aot_value), (rt_key, rt_value) in pairs.items():
        group = sorted({n for h in aot_key for n in by_handle.get(h, [])}, key=lambda n: order.get(n, -1))
        if not group:
            continue
        node = group[-1]
        produced = runtime.get(tuple(rt_key))
        instruction = produced.instruction if produced else -1
        candidate = names.get(instruction, "?")
        made = comparable(node, tuple(aot_key), aot_value, rt_value, edges, dim_orders(shown.get(candidate)))
        if isinstance(made, Comparable):
            e = compare_values(node, candidate, made.ref, made.cand)
            if e is not None and made.note:
                e.note = "; ".join(x for x in (made.note, e.note) if x)
        else:
            e = not_compared(node, candidate, made.why)
        if e is None:
            continue
        errors[node] = e
        extras[node] = {"group": group, "instruction": instruction,
                        "delegate": produced.delegate if produced else ""}
    return errors, extras
