"""ONNX Runtime's profile on a `.onnx` program's nodes: an adapter of the one Chrome-trace importer.

`SessionOptions.enable_profiling = True` makes a session write `onnxruntime_profile_*.json`, a bare array of
Chrome trace events, read by core/profile/trace_file.py as any trace is (bounded, typed, nothing run). Its "Session"
events are the session's steps (`model_run`: one per run); its "Node" events are the nodes it ran, each as
`NAME_fence_before`, `NAME_kernel_time` and `NAME_fence_after`, with `args.op_name` and `args.provider`. Only
`_kernel_time` is the node's time. Each is attributed to the model's node by its name (core/profile/onnx_names.py
follows the names ONNX Runtime's optimizer gives what it rewrites); a node the optimizer fused several of the
model's nodes into shares its time between them equally, so the sum over the nodes is the kernels' time. The device
is the provider's (CPUExecutionProvider -> cpu). Kernel time of nodes the optimizer made is `unattributed_us`.

A profile in which most node names are no node of the model is refused in one line: it is another model's."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from pt2_viewer.core.model.program import NodeOp, Program, capped_text
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import Attribution, NodeTime, ProfileTrace, TraceEvent
from pt2_viewer.core.profile.onnx_names import KERNEL_TIME, ModelNodes, fused_into, model_nodes, node_name, resolve
from pt2_viewer.core.util.words import format_seconds

NODE_CATEGORY = "node"
SESSION_CATEGORY = "session"
RUN_EVENT = "model_run"
NO_OPTIMIZER = "SessionOptions.graph_optimization_level = ORT_DISABLE_ALL"
_SHOWN = 3  # names a note or a refusal gives as examples
_NAME_CHARS = 120  # what a note or a refusal keeps of each name
_MIN_REACHED = 4  # a profile of the model runs at least a quarter of its nodes, fused ones included


def is_onnx_runtime_profile(trace: ProfileTrace) -> bool:
    """A profile ONNX Runtime wrote: it has node events timed as `NAME_kernel_time`."""
    return any(e.category.lower() == NODE_CATEGORY and e.name.endswith(KERNEL_TIME) for e in trace.events)


def device_of(provider: str) -> str:
    """`CPUExecutionProvider` -> `cpu`, `CUDAExecutionProvider` -> `cuda`; no provider -> `cpu`."""
    return provider.removesuffix("ExecutionProvider").lower() or "cpu"


def attribute_onnx(program: Program, trace: ProfileTrace, program_label: str = "") -> Attribution:
    """Per node times of the `.onnx` `program` from ONNX Runtime's profile `trace`; `ProfileError` when it is no
    such profile, or another model's."""
    label = program_label or program.name
    kernels = [e for e in trace.events if e.category.lower() == NODE_CATEGORY and e.name.endswith(KERNEL_TIME)]
    if not kernels:
        raise ProfileError(f"{trace.path}: holds no ONNX Runtime node events (NAME_kernel_time); run {label} in "
                           "ONNX Runtime with SessionOptions.enable_profiling = True and give the "
                           "onnxruntime_profile_*.json it writes")
    model = model_nodes(program)
    found = _resolved(kernels, model)
    _refuse_another_model(trace.path, label, found, model)
    absorbed = fused_into({n for nodes in found.values() if nodes for n in nodes}, model)
    for key, names in found.items():
        if names:
            found[key] = names + [a for n in names for a in absorbed.get(n, ())]
    nodes = {n.name: NodeTime(n.name, n.whole_target) for n in program.graph.nodes if n.op is NodeOp.CALL_FUNCTION}
    unattributed = 0.0
    made: dict[str, float] = {}  # a node the optimizer made -> its time
    for e in kernels:
        names = found[(node_name(e.name)[0], e.op_name)]
        if names is None:  # inside an If's or a Loop's subgraph: its own event's time holds it
            continue
        if not names:
            unattributed += e.dur
            made[node_name(e.name)[0]] = made.get(node_name(e.name)[0], 0.0) + e.dur
            continue
        share = e.dur / len(names)
        for name in names:
            node = nodes[name]
            node.calls += 1
            node.us += share
            node.device = device_of(e.provider)
            node.events.append(e if len(names) == 1 else dataclasses.replace(e, dur=share, shared_by=len(names)))
    runs = sum(1 for e in trace.events if e.category.lower() == SESSION_CATEGORY and e.name == RUN_EVENT)
    timed = [n for n in nodes.values() if n.calls]
    devices = sorted({n.device for n in timed}) or [device_of(kernels[0].provider)]
    return Attribution(label, trace.path, ", ".join(devices), runs or max((n.calls for n in timed), default=0),
                       list(nodes.values()), unattributed, _notes(found, made, model, absorbed))


def _resolved(kernels: list[TraceEvent], model: ModelNodes) -> dict[tuple[str, str], list[str] | None]:
    """(session node name, op) -> the program nodes it computes ([] none, None inside a subgraph), once each."""
    out: dict[tuple[str, str], list[str] | None] = {}
    for e in kernels:
        key = (node_name(e.name)[0], e.op_name)
        if key not in out:
            out[key] = None if key[0] in model.nested else [n.name for n in resolve(key[0], key[1], model)]
    return out


def _refuse_another_model(path: str, label: str, found: dict[tuple[str, str], list[str] | None],
                          model: ModelNodes) -> None:
    """Most of the profile's node names no node of the model, or the profile reaching few of the model's nodes
    (ONNX Runtime's optimizer fuses some, never most): it profiled another model."""
    names = {name for (name, _), nodes in found.items() if nodes is not None}
    known = {name for (name, _), nodes in found.items() if nodes}
    reached = {node for nodes in found.values() if nodes for node in nodes}
    if not known or len(known) * 2 < len(names):
        unknown = sorted(names - known)
        raise ProfileError(f"{path}: not a profile of {label}: {len(unknown)} of its {len(names)} node names are no "
                           f"node of the model (such as {_some(unknown)}); give the profile ONNX Runtime wrote "
                           "running this .onnx")
    if len(reached) * _MIN_REACHED < len(model.by_name):
        raise ProfileError(f"{path}: not a profile of {label}: it ran {len(reached)} of the model's "
                           f"{len(model.by_name)} nodes; give the profile ONNX Runtime wrote running this .onnx")


def _notes(found: dict[tuple[str, str], list[str] | None], made: dict[str, float], model: ModelNodes,
           absorbed: dict[str, list[str]]) -> list[str]:
    renamed = sorted(name for (name, _), nodes in found.items() if nodes and name not in model.by_name)
    notes = []
    if absorbed:
        inside = [f"{name} in {host}" for host, names in absorbed.items() for name in names]
        notes.append(f"{_count(inside)} without events of their own, run inside the node before them, share its "
                     f"time ({_some(inside)})")
    if renamed:
        notes.append(f"{_count(renamed)} that ONNX Runtime's optimizer renamed or fused, followed back to the "
                     f"model's ({_some(renamed)})")
    if made:
        notes.append(f"{format_seconds(sum(made.values()) / 1e6)} in {_count(made)} not in the graph "
                     f"({_some(sorted(made, key=lambda n: -made[n]))}): made by ONNX Runtime's optimizer, or copies "
                     f"of a weight; with {NO_OPTIMIZER} the session runs the model's nodes as the file holds them")
    return notes


def _count(names: Iterable[str]) -> str:
    n = len(list(names))
    return f"{n} node{'' if n == 1 else 's'}"


def _some(names: list[str]) -> str:
    """The first few names, each cut short: a hostile profile's names may be megabytes long."""
    return ", ".join(capped_text(n, _NAME_CHARS) for n in names[:_SHOWN]) + (", ..." if len(names) > _SHOWN else "")
