"""A `.pte` method's instructions and the source program's nodes: the `.pte` graph's node names (the torch-free
reader, core/pte/program_map.py), what two lowerings of one program agree on, and the debug handles ExecuTorch's
Inspector propagates back from an ETRecord onto the source's nodes."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.provenance import call_nodes, target_text
from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.model.program import Ref
from pt2_viewer.core.pte.errors import PteError


def pte_program(path: Path, method: str | None) -> Any:
    """The viewer's Program of a `.pte` method (torch-free reader), or `JobFailure`."""
    from pt2_viewer.core.pte.reader import read_pte  # deferred: the flatbuffers runtime imports numpy

    try:
        archive = read_pte(path)
    except PteError as e:
        raise JobFailure("load", str(e), "Lower the model again, or copy the file again.") from None
    if not archive.programs:
        raise JobFailure("load", f"'{path.name}' holds no method.", "Lower the model again.")
    return archive.program(method) if method else archive.programs[0]


def instruction_names(program: Any) -> dict[int, str]:
    """Instruction index -> the `.pte` graph's node name for it."""
    return {int(n.metadata["instruction"]): n.name for n in program.graph.nodes if "instruction" in n.metadata}


def instruction_signature(program: Any) -> list[tuple[str, str]]:
    """Each instruction of a method, in order: its operator or delegate call, and the whole instruction. That is its
    arguments (the values it reads and writes with their dtypes, shapes, dim orders and places in the memory plan,
    not `requires_grad`, which only says whether grad mode was on; its literals) and, for a delegate call, its
    backend, payload size and the ops it holds; not what a constant holds. Two lowerings of one program agree on all
    of it; a file lowered from weights changed since agrees too."""
    values = program.graph.values

    def arg(value: Any) -> str:
        if isinstance(value, Ref):
            meta = values.get(value.value)
            if meta is None:
                return f"{value.value}:?"
            # requires_grad is left out: it follows whether grad mode was on while lowering, not what is computed
            tensor = {k: v for k, v in (meta.meta_json or {}).items() if k != "requires_grad"}
            return f"{value.value}:{meta.kind}:{tensor}"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(arg(v) for v in value) + "]"
        return repr(value)

    out = []
    for n in program.graph.nodes:
        if "instruction" in n.metadata:
            args = ", ".join(f"{a.name}={arg(a.value)}" for a in n.inputs)
            outs = ", ".join(arg(Ref(o)) if o else "None" for o in n.outputs)
            out.append((str(n.target), f"{n.target}({args}) -> ({outs}) {sorted(n.metadata.items())}"))
    return out


def check_same_program(rec_ep: Any, ep: Any, what: str) -> None:
    mine = [(n.name, target_text(n.target)) for n in call_nodes(ep.graph)]
    theirs = [(n.name, target_text(n.target)) for n in call_nodes(rec_ep.graph)]
    if mine != theirs:
        diff = next(((a, b) for a, b in zip(mine, theirs) if a != b), None)
        detail = f"first difference: {diff[0]} against {diff[1]}" if diff else f"{len(mine)} ops against {len(theirs)}"
        raise JobFailure("mismatch", f"{what} was not made from this source program ({detail}).",
                         "Name the source .pt2 the .pte was lowered from, or its own ETRecord.")


def reference_handles(inspector: Any) -> dict[str, tuple[int, ...]]:
    """Source node name -> its debug handles, propagated back by ExecuTorch onto the ETRecord's exported program."""
    try:
        gm, graph_name = inspector._resolve_reference_graph(None)
    except ValueError:
        graph_name = ""
    if graph_name != "exported_program":
        try:
            gm, graph_name = inspector._resolve_reference_graph("exported_program", True)
        except ValueError as e:
            raise JobFailure("mismatch", f"The ETRecord's debug handles do not lead back to the source program's "
                             f"nodes ({e}).", "Lower the source again with pt2-viewer lower.") from None
    ep = inspector._etrecord.exported_program
    out: dict[str, tuple[int, ...]] = {}
    for n in ep.graph.nodes:
        h = n.meta.get("debug_handle")
        if n.op == "call_function" and h not in (None, 0):
            out[n.name] = (h,) if isinstance(h, int) else tuple(h)
    return out


def handles_to_nodes(handles: dict[str, tuple[int, ...]]) -> dict[int, list[str]]:
    """Debug handle -> the source nodes carrying it."""
    out: dict[int, list[str]] = {}
    for name, hs in handles.items():
        for h in hs:
            out.setdefault(h, []).append(name)
    return out
