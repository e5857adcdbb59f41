"""The numerics of an ONNX model op by op: ONNX Runtime runs a copy of the model that also returns the intermediate
values it needs, and each is compared with the value of the source program's node the ONNX node came from.

- The candidate is a `FILE.onnx`, or `onnx`: the program exported here first, as `lower --to onnx` exports it
  (core/deploy/onnx_lower.py), into the job's folder.
- Each ONNX node is linked to its source nodes torch-free (core/onnx/viewer_links.py): exactly where the file holds
  the links `lower --to onnx` writes (as `onnx` exports it), else by the FX node, its module, op and order
  (core/onnx/linking.py; a link found by module and order is marked approximate and the row says so). The file is
  read with the viewer's ONNX reader, so a hostile file is refused as it is when opened.
  A model whose nodes name no source (a TorchScript export) is compared at the program's outputs, in order.
- The ONNX nodes linked to one source node (an ONNX node computing several, at the last of them) are a group; the
  group is compared where its value leaves it (an output read by a node outside the group, or a graph output), as
  AOTInductor's kernels are. A source node with no ONNX node of its own that a group computes besides (`conv2d` in
  the Conv that took in its BatchNorm, `FuseBatchNormIntoConv`) is a row "not compared", and that group's row lists
  it in `group`: the fused group is compared where its value leaves it.
- Rows name the source node (`node`) and the ONNX node whose output was compared (`candidate`, as the viewer names
  it in the `.onnx`'s graph), so changing one weight in the `.onnx` puts the first divergence on the op that reads it.
- The inputs are the program's own (core/numerics/pte.py `flat_inputs`), given to the model's graph inputs in order.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.onnx_lower import INSTALL_HINT
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.schemas.numerics import NumericsResult
from pt2_viewer.core.numerics.capture import shown_name, steps
from pt2_viewer.core.numerics.guarded import copied, guarded, guarded_steps, own_inputs, progress, start_args
from pt2_viewer.core.numerics.metrics import NodeError, compare_values, not_compared, tensor_leaves
from pt2_viewer.core.numerics.pte import flat_inputs
from pt2_viewer.core.numerics.store import MemoryUse
from pt2_viewer.core.util.files import write_atomically

Emit = Callable[[dict[str, Any]], None]
Rows = tuple[dict[str, NodeError], dict[str, dict[str, Any]]]
NOTE = ("Each ONNX node's output, from ONNX Runtime, against the program's node the node's metadata names "
        "(`candidate` is the ONNX node; a group the optimizer fused is compared where its value leaves it).")
APPROXIMATE = "linked by module, op and order (approximate)"
BY_OUTPUT = "the model names no source nodes (a TorchScript export): compared at the program's outputs, in order"


@dataclass
class Group:
    """The ONNX nodes (the file's names, in the graph's order) linked to one source node, and what they say."""

    nodes: list[str] = field(default_factory=list)
    approximate: bool = False
    rules: str = ""  # the rewrite rules that made any of them
    why: str = APPROXIMATE  # what an approximate link's row says


def output_groups(ep: Any, graph: Any) -> tuple[dict[str, list[str]], dict[str, Group]]:
    """For a model whose nodes name no source node: each user output of the program (the node making it) -> the
    graph output in its place, as the exporter writes them, and its producer as the group."""
    from torch.export.graph_signature import OutputKind

    returned = list(ep.graph.output_node().args[0])
    user = [a for spec, a in zip(ep.graph_signature.output_specs, returned) if spec.kind == OutputKind.USER_OUTPUT]
    made_by = {o: n.name for n in graph.node for o in n.output}
    exits: dict[str, list[str]] = {}
    groups: dict[str, Group] = {}
    for arg, out in zip(user, graph.output):
        name = shown_name(arg) if hasattr(arg, "op") else None
        if name is None or name in exits or out.name not in made_by:
            continue
        exits[name] = [out.name]
        groups[name] = Group([made_by[out.name]], approximate=True, why=BY_OUTPUT)
    return exits, groups


def require_runtime() -> Any:
    """The onnxruntime module; `JobFailure` naming the command that installs it."""
    try:
        import onnx  # noqa: F401 (read and rewritten here)
        import onnxruntime
    except ImportError as e:
        raise JobFailure("missing_module", f"Comparing with an ONNX model needs onnx and onnxruntime, which the "
                         f"worker's Python does not have ({first_line(e)}).", INSTALL_HINT) from None
    return onnxruntime


def export_onnx(ep: Any, path: Path, log: list[str], source: str) -> None:
    """The program exported as `lower --to onnx` exports it (core/deploy/onnx_lower.py): torch's dynamo exporter,
    each ONNX node tagged with the source nodes torch's `from_node` names, written to `path`."""
    from pt2_viewer.core.deploy import onnx_lower

    program = onnx_lower.export(ep, True, log)
    onnx_lower.tag(program, onnx_lower.fates(ep, onnx_lower.link(program, ep)), source)
    onnx_lower.save(program, path)


def groups(onnx_file: Path, source_file: str, program_name: str) -> tuple[dict[str, Group], dict[str, str],
                                                                          dict[str, str]]:
    """Source node -> its ONNX group; each ONNX node's (the file's name) name in the viewer's graph; and each source
    node an ONNX node computes besides the one it is compared at (a Conv that took in its BatchNorm computes
    `conv2d` too) -> that one. Read torch-free by the viewer's own readers: the exact links `lower --to onnx` wrote
    into the file where it has them, else those core/onnx/linking.py finds."""
    from pt2_viewer.core.formats import registry
    from pt2_viewer.core.onnx.viewer_links import links_to_source

    try:
        onnx_program = registry.read(onnx_file).programs[0]
        programs = registry.read(source_file).programs
    except Exception as e:  # the readers' one-line errors (ArchiveError), said as the job's
        hint = ("Open the .onnx in the viewer to see what it holds." if onnx_file.is_file()
                else "Check the path: name the .onnx file the program was exported to.")
        raise JobFailure("onnx", str(e).splitlines()[0] if str(e) else type(e).__name__, hint) from None
    source = next((p for p in programs if p.name == program_name), programs[0])
    links = links_to_source(onnx_program.graph, source.graph)
    shown: dict[str, str] = {}
    out: dict[str, Group] = {}
    within: dict[str, str] = {}
    for node in onnx_program.graph.nodes:
        name = node.metadata.get("ONNX node")
        if name is None:
            continue
        shown.setdefault(name, node.name)
        found = [link for link in links.get(node.name, []) if link.node is not None]
        if not found:
            continue
        last = str(found[-1].node)
        within.update((str(link.node), last) for link in found[:-1])
        group = out.setdefault(last, Group())
        group.nodes.append(name)
        group.approximate |= found[-1].approximate
        rules = node.metadata.get("rewrite rules", "")
        if rules and rules not in group.rules:
            group.rules = ", ".join(r for r in (group.rules, rules) if r)
    return out, shown, within


def leaving(graph: Any, members: set[str]) -> list[str]:
    """The values the ONNX nodes `members` make that leave them: read by another node (inside its subgraphs too) or
    a graph output, in the graph's order."""
    outputs = {o.name for o in graph.output}
    read_outside: set[str] = set()
    for node in graph.node:
        if node.name not in members:
            read_outside.update(node.input)
            for attr in node.attribute:
                for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                    read_outside.update(_read_in(sub))
    return [o for node in graph.node if node.name in members for o in node.output
            if o and (o in outputs or o in read_outside)]


def _read_in(graph: Any) -> set[str]:
    names: set[str] = set()
    for node in graph.node:
        names.update(node.input)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                names |= _read_in(sub)
    return names


def run_model(model: Any, folder: Path, wanted: list[str], feeds: list[Any], out: Path) -> dict[str, Any]:
    """Run a copy of `model` (its external data read from `folder`) that also returns `wanted`, on `feeds` given to
    its graph inputs in order; the values by name, as numpy arrays."""
    import onnx
    from onnx import external_data_helper

    ort = require_runtime()
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    external = any(t.data_location == 1 for t in copy.graph.initializer)
    if external:
        external_data_helper.load_external_data_for_model(copy, str(folder))  # locations checked on reading
    typed = {v.name: v for v in (*copy.graph.value_info, *copy.graph.output)}
    have = {o.name for o in copy.graph.output}
    for name in wanted:
        if name not in have:
            copy.graph.output.append(typed[name] if name in typed else onnx.ValueInfoProto(name=name))
    path = out / "onnx_numerics" / "with_intermediates.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, lambda tmp: onnx.save_model(copy, str(tmp), save_as_external_data=external,
                                                       location=f"{path.name}.data"))
    session = guarded("ONNX Runtime's session", lambda: ort.InferenceSession(
        str(path), providers=["CPUExecutionProvider"]))
    inputs = [i.name for i in session.get_inputs()]
    if len(inputs) != len(feeds):
        raise JobFailure("onnx", f"The ONNX model takes {len(inputs)} inputs and the program {len(feeds)} tensors.",
                         "Compare the .onnx exported from this program (or --candidate onnx).")
    names = [o.name for o in session.get_outputs()]
    values = guarded("the ONNX model in ONNX Runtime", lambda: session.run(names, dict(zip(inputs, feeds))))
    return dict(zip(names, values))


def _numpy(value: Any) -> Any:
    import torch

    if value.dtype == torch.bfloat16:
        raise JobFailure("onnx", "The program's inputs are bfloat16, which numpy (and so ONNX Runtime's Python API) "
                         "cannot hold.", "Compare the program with float32 inputs.")
    return value.detach().cpu().contiguous().numpy()


def _paired(ref: Any, cands: list[tuple[str, Any]]) -> tuple[Any, Any, str, str] | None:
    """The reference value and the leaving ONNX values that stand for it, matched by shape (the last of each shape:
    where the value leaves the group), and the ONNX value named; None when no shape matches."""
    import torch

    refs = tensor_leaves(ref)
    tensors = [(n, torch.from_numpy(v) if not isinstance(v, torch.Tensor) else v) for n, v in cands
               if hasattr(v, "shape")]
    picked: list[tuple[str, Any]] = []
    kept: list[Any] = []
    for r in refs:
        match = [(n, t) for n, t in tensors if tuple(t.shape) == tuple(r.shape)]
        if match:
            picked.append(match[-1])
            kept.append(r)
    if not picked:
        if len(refs) == 1 and len(tensors) == 1 and tensors[0][1].numel() == refs[0].numel():
            n, t = tensors[0]
            return refs[0], t.reshape(refs[0].shape), n, f"shape {list(t.shape)} compared as {list(refs[0].shape)}"
        return None
    note = "" if len(kept) == len(refs) else f"{len(kept)} of its {len(refs)} tensors compared"
    return kept if len(kept) > 1 else kept[0], [t for _, t in picked] if len(picked) > 1 else picked[0][1], \
        picked[-1][0], note


def compare_onnx(ep: Any, candidate: str, args: tuple[Any, ...], kwargs: dict[str, Any], program_name: str,
                 out: Path, emit: Emit, report: NumericsResult, memory: MemoryUse) -> Rows:
    """Per-node errors of the ONNX model against the source `ep` (keyed by source node), and each row's extras
    (`group`: the source nodes a fused group computes); `memory` says what ONNX Runtime's values held."""
    import torch

    from pt2_viewer.core.onnx.reader import load_model

    require_runtime()
    if candidate == "onnx":
        path = out / "candidate.onnx"
        progress(emit, "export", 0.1, "Exporting the program to ONNX (torch.onnx.export, dynamo=True)")
        export_onnx(ep, path, report.log, f"{Path(str(report.program)).name} [{program_name}]")
    else:
        path = Path(candidate)
    by_source, shown, within = groups(path, str(report.program), program_name)
    model = load_model(path)
    graph_nodes = {n.name for n in model.graph.node}
    order = [n.name for n in ep.graph.nodes]
    exits = {s: leaving(model.graph, set(g.nodes) & graph_nodes) for s, g in by_source.items()}
    if not exits:  # no node names its source (a TorchScript export): the graph's outputs, in the program's order
        exits, by_source = output_groups(ep, model.graph)
    wanted = list(dict.fromkeys(v for vs in exits.values() for v in vs))
    made_by = {o: n.name for n in model.graph.node for o in n.output}
    flat = [a for a in flat_inputs(ep, *own_inputs(args, kwargs)) if isinstance(a, torch.Tensor)]
    progress(emit, "candidate", 0.4, f"Running {path.name} in ONNX Runtime ({len(wanted)} values kept)")
    values = run_model(model, path.resolve().parent, wanted, [_numpy(a) for a in flat], out)
    memory.peak_held_bytes = sum(int(getattr(v, "nbytes", 0)) for v in values.values())  # all returned at once
    progress(emit, "reference", 0.7, "Running the program")
    errors: dict[str, NodeError] = {}
    extras: dict[str, dict[str, Any]] = {}
    fused = _fused(ep, by_source, within)
    flat_user = [a for a in flat_inputs(ep, *own_inputs(args, kwargs))]
    for node, value in guarded_steps("the program", steps(ep.graph_module, start_args(ep, flat_user))):
        name = shown_name(node)
        if node.op != "call_function" or name != node.name:
            continue
        if name in fused:
            into = fused[name]
            onnx_node = shown.get(into[1], into[1])
            rules = by_source[into[0]].rules
            errors[name] = not_compared(name, onnx_node, f"fused into {onnx_node}{' by ' + rules if rules else ''}, "
                                        f"compared at {into[0]}")
            continue
        leaves = exits.get(name)
        if not leaves:
            continue
        pair = _paired(copied(value), [(v, values[v]) for v in leaves if v in values])
        onnx_node = made_by.get(leaves[-1], "")
        if pair is None:
            if tensor_leaves(value):
                errors[name] = not_compared(name, shown.get(onnx_node, onnx_node),
                                            "no value leaving its ONNX nodes has its shape")
            continue
        ref, cand, value_name, note = pair
        onnx_node = made_by.get(value_name, onnx_node)
        e = compare_values(name, shown.get(onnx_node, onnx_node), ref, cand)
        if e is None:
            continue
        group = by_source[name]
        e.note = "; ".join(x for x in (note, group.why if group.approximate else "", e.note) if x)
        errors[name] = e
        members = [s for s, (into, _) in fused.items() if into == name]
        if members:
            extras[name] = {"group": sorted([*members, name], key=order.index)}
    return errors, extras


def _fused(ep: Any, by_source: dict[str, Group], within: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Source node with no ONNX node of its own -> (the source node whose group computes it, that group's last ONNX
    node): one an ONNX node computes besides (`within`), else one whose user's group a rewrite rule made (a
    BatchNorm's conv, taken into the Conv)."""
    out: dict[str, tuple[str, str]] = {}
    for node in ep.graph.nodes:
        if node.op != "call_function" or node.name in by_source:
            continue
        into = within.get(node.name)
        if into is None or into not in by_source:
            into = next((u.name for u in node.users if u.name in by_source and by_source[u.name].rules), None)
        if into is not None:
            out[node.name] = (into, by_source[into].nodes[-1])
    return out
