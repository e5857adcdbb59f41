"""A `.pte` method's instructions and the source program's nodes: the `.pte` graph's node names (the torch-free
reader, core/pte/program_map.py), what two lowerings of one program agree on, and the debug handles ExecuTorch's
Inspector propagates back from an ETRecord onto the source's nodes."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.provenance import call_nodes, target_text
from pt2_viewer.core.jobs.errors import JobFailure
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


def instruction_signature(program: Any) -> list[str]:
    """The operators and delegate calls of a method, in order: what two lowerings of one program agree on."""
    return [str(n.target) for n in program.graph.nodes if "instruction" in n.metadata]


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


def source_to_pte(etrecord: Any, program: Any, method: str = "forward") -> dict[str, list[str]]:
    """Source node -> the `.pte` graph's nodes computing it, through the ETRecord's debug handles: each
    instruction's handles (its `_debug_handle_map`) and the handles ExecuTorch propagates back onto the source."""
    from executorch.devtools.inspector._inspector_utils import propagate_back_debug_handle

    ep = etrecord.exported_program
    if ep is None or not etrecord._debug_handle_map or not propagate_back_debug_handle(
            ep, etrecord.export_graph_id, etrecord.edge_dialect_program, True):
        return {}
    by_handle = handles_to_nodes({n.name: (h,) if isinstance(h, int) else tuple(h) for n in ep.graph.nodes
                                  if n.op == "call_function" and (h := n.meta.get("debug_handle")) not in (None, 0)})
    names = instruction_names(program)
    out: dict[str, list[str]] = {}
    for instruction, handles in (etrecord._debug_handle_map.get(method) or {}).items():
        node = names.get(int(instruction))
        for h in [handles] if isinstance(handles, int) else handles or []:
            for source in by_handle.get(int(h), []):
                if node is not None and node not in out.setdefault(source, []):
                    out[source].append(node)
    return out
