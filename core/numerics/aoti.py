"""AOTInductor op by op: each kernel's output against the program's node that carries it out.

`--candidate aoti` builds the package in the worker with torch's provenance tracking (`trace.provenance_tracking_level`
1: `kernel_information.json` maps each kernel call to the program nodes it computes) and the intermediate-value
printer saving each kernel's tensors (`aot_inductor.debug_intermediate_value_printer` "1": the wrapper calls
`aoti_torch_save_tensor_handle` after each launch, which writes `tmp/aoti_torch...after_launch_KERNEL_BUF_DEVICE.pt`
under the working directory). A `PACKAGE.pt2` built with both settings is compared the same way; one built without
them is compared at its outputs only (the caller's fallback).

The package runs once in a folder of the job's, its saved tensors are read back (`weights_only`), and each kernel's
buffers (those it fills: core/pt2/aoti.py `KernelCall.writes`) are matched, by shape, to the nodes of its group that
carry a value out of it (used outside the group, or a program output), as decompositions are compared
(core/numerics/capture.py `exits`). Rows name the kernel and list its group.
"""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.loading import captured_torch_logs
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.numerics.capture import steps
from pt2_viewer.core.numerics.guarded import copied, guarded, guarded_steps, progress, start_args
from pt2_viewer.core.numerics.metrics import NodeError, compare_values
from pt2_viewer.core.pt2.aoti import AotiModel, KernelCall
from pt2_viewer.core.run.aoti_job import load_package, package_model, working_dir
from pt2_viewer.core.util.files import write_atomically

TRACED_CONFIGS = {"trace.provenance_tracking_level": 1, "aot_inductor.debug_intermediate_value_printer": "1",
                  "cpp.enable_kernel_profile": True}  # the package kept in OUT can be profiled too (run --node-times)
NOTE = ("Each AOTInductor kernel's output, saved by torch's intermediate-value printer, against the program's node "
        "that carries it out of the kernel's group (torch's provenance, kernel_information.json); `kernel` names the "
        "call, `group` the nodes it computes.")
VALUES_DIR = "aoti_values"


def build_traced(ep: Any, package: Path, log: list[str]) -> None:
    """Compile and package `ep` with provenance tracking and the intermediate-value printer saving."""
    import torch


    try:
        with captured_torch_logs(log):
            write_atomically(package, lambda tmp: torch._inductor.aoti_compile_and_package(
                ep, package_path=str(tmp), inductor_configs=dict(TRACED_CONFIGS)))
    except Exception as e:
        raise JobFailure("aoti", f"AOTInductor could not compile the program: {first_line(e)}",
                         "The log has the full message.") from e


def traced_model(package: Path) -> AotiModel | None:
    """The package's model when it was built to be compared op by op (provenance and saved values), else None."""

    model = package_model(package)
    return model if model is not None and model.saves_values else None


def exit_nodes(graph: Any, group: list[str]) -> list[str]:
    """The nodes of `group` (in the graph's order) whose value is used outside it or is a program output."""
    members = set(group)
    out = []
    for node in graph.nodes:
        if node.name in members and any(u.name not in members or u.op == "output" for u in node.users):
            out.append(node.name)
    return out


def saved_value(folder: Path, calls: list[KernelCall], i: int, buffer: str, device: str) -> Any:
    """The tensor call `i` filled `buffer` with: saved after it, else saved before the next call that reads it (an
    ATen fallback's outputs are not saved after it); None when never saved. torch 2.13 writes `tmp/aoti_torch` and the
    file name with no separator between them; a later torch may add one, so both are looked for."""
    import torch

    tries = [("after", calls[i])] if buffer in calls[i].saved else []
    later = next((c for c in calls[i + 1:] if buffer in c.saved_before), None)
    tries += [("before", later)] if later is not None else []
    for when, call in tries:
        name = f"{when}_launch_{call.saved_as or call.kernel}_{buffer}_{device}.pt"
        for path in (folder / "tmp" / f"aoti_torch{name}", folder / "tmp" / "aoti_torch" / name):
            if path.is_file():
                return torch.load(str(path), weights_only=True, map_location="cpu")
    return None


def compare_kernels(ep: Any, runner: Any, model: AotiModel, args: tuple[Any, ...], kwargs: dict[str, Any],
                    reference: dict[str, Any], folder: Path, device: str = "cpu"
                    ) -> tuple[dict[str, NodeError], dict[str, dict[str, Any]]]:
    """Run the package once in `folder` and compare each kernel's saved buffers with `reference` (node -> value)
    at its group's exit nodes: (errors by node, the rows' extra fields: kernel, group).

    A node torch lists for several calls (an attention's input preparation and the attention itself) is compared at
    the last call that carries it out of its group, and only there; a buffer of the node's shape is its value."""

    with working_dir(folder):
        runner(*args, **kwargs)
    try:
        return _compare_saved(ep, model, reference, folder, device)
    finally:
        shutil.rmtree(folder / "tmp", ignore_errors=True)  # every kernel's tensors: as big as the run's intermediates


def _compare_saved(ep: Any, model: AotiModel, reference: dict[str, Any], folder: Path, device: str
                   ) -> tuple[dict[str, NodeError], dict[str, dict[str, Any]]]:
    calls = model.kernels
    names = {n.name for n in ep.graph.nodes}
    groups = [[n for n in c.source_nodes if n in names] if c.from_provenance else [] for c in calls]
    owner: dict[str, int] = {}
    for i, group in enumerate(groups):
        for node in exit_nodes(ep.graph, group):
            owner[node] = i
    saved = "cpu" if device == "cpu" else "cuda:0" if device == "cuda" else device
    errors: dict[str, NodeError] = {}
    extras: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for node in (n.name for n in ep.graph.nodes if n.name in owner and n.name in reference):
        i = owner[node]
        for buffer in calls[i].writes:
            if buffer in used:
                continue
            value = saved_value(folder, calls, i, buffer, saved)
            if value is None or tuple(value.shape) != _shape(reference[node]):
                continue
            used.add(buffer)
            e = compare_values(node, f"{calls[i].kernel} ({buffer})", reference[node], value)
            if e is not None:
                errors[node] = e
                extras[node] = {"kernel": calls[i].handle or calls[i].kernel, "group": groups[i]}
            break
    return errors, extras


def wanted_nodes(ep: Any, model: AotiModel) -> set[str]:
    """The program nodes a kernel's output may be compared with: the exits of every kernel's group."""
    names = {n.name for n in ep.graph.nodes}
    return {n for call in model.kernels if call.from_provenance
            for n in exit_nodes(ep.graph, [m for m in call.source_nodes if m in names])}


def _shape(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def compare_aoti(kind: str, candidate: str, ep: Any, flat_user: list[Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any], out: Path, emit: Any, report: NumericsResult, request: NumericsRequest
                 ) -> tuple[dict[str, NodeError], dict[str, dict[str, Any]]] | None:
    """`--candidate aoti` (built here, traced) or a traced `PACKAGE.pt2`, op by op; None for a package built without
    provenance and saved values (the caller compares its outputs)."""

    if kind == "aoti":
        package = out / "model.aoti.pt2"
        progress(emit, "aoti_compile", 0.2, "Compiling with AOTInductor, provenance and saved kernel values "
                 "(tens of seconds)")
        build_traced(ep, package, report.log)
        request = replace(request, allow_native=True)  # built here, from the program: no one else's code
    else:
        package = Path(candidate)
    model = traced_model(package)
    if model is None:
        if kind == "aoti":
            raise JobFailure("aoti", "AOTInductor built the package without the kernel provenance or saved values "
                             "asked for.", "The log has torch's messages.")
        return None
    wanted = wanted_nodes(ep, model)
    progress(emit, "reference", 0.5, f"Running the reference ({len(ep.graph.nodes)} nodes)")
    reference: dict[str, Any] = {}
    for node, value in guarded_steps("the reference", steps(ep.graph_module, start_args(ep, flat_user))):
        if node.name in wanted and node.op != "output":
            reference[node.name] = copied(value)
    progress(emit, "candidate", 0.7, f"Running {package.name}, saving each kernel's output")
    device = "cuda" if model.device == "cuda" else "cpu"  # where the package was compiled for; the reference: CPU
    runner = load_package(package, request, device=device)
    if device != "cpu":
        import torch.utils._pytree as pytree

        args, kwargs = pytree.tree_map(lambda v: v.to(device) if hasattr(v, "to") else v, (args, kwargs))
    errors, extras = guarded(package.name, lambda: compare_kernels(ep, runner, model, args, kwargs, reference,
                                                                    out / VALUES_DIR, device))
    return errors, extras
