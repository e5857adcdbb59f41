"""One map from a program's nodes to its `.pte`'s (core/deploy/handle_map.py, issue 42 item 7): read from the
ETRecord's JSON without torch, it is what ExecuTorch's own Inspector finds when it propagates the debug handles back
onto the source (`propagate_back_debug_handle`), on the zoo's CNN and transformer lowered to XNNPACK; the lower job's
`source_to_pte` is that map; and the lowering view's diff pairs each op only with a `.pte` node its handles name (it
once paired `mul` with `native_layer_norm_3` by structure, issue 43 item 3)."""
from __future__ import annotations

from typing import Any

import pytest

from pt2_viewer.core.compare.session import LEFT
from pt2_viewer.core.deploy.delegation import lowered_session
from pt2_viewer.core.deploy.handle_map import DEBUG_HANDLE, etrecord_source_to_pte, handles_of
from pt2_viewer.core.diff.matcher import PROVENANCE
from pt2_viewer.core.diff.program_diff import diff_programs
from pt2_viewer.core.model.program import NodeOp
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.pte.reader import read_pte
from tests.deploy_programs import CNN, TRANSFORMER, Lowered, lowered_or_skip

pytest.importorskip("executorch", reason="executorch lowers the programs (requirements-dev.txt)")


def _inspectors_map(low: Lowered) -> dict[str, list[str]]:
    """ExecuTorch's answer: each instruction's debug handles, to the source nodes its Inspector gives them."""
    from executorch.devtools.etrecord import parse_etrecord
    from executorch.devtools.inspector._inspector_utils import propagate_back_debug_handle

    rec = parse_etrecord(str(low.etrecord))
    ep = rec.exported_program
    assert propagate_back_debug_handle(ep, rec.export_graph_id, rec.edge_dialect_program, True)
    by_handle: dict[int, list[str]] = {}
    for n in ep.graph.nodes:
        if n.op == "call_function":
            for h in handles_of(n.meta.get("debug_handle")):
                if h:
                    by_handle.setdefault(h, []).append(n.name)
    names = {int(n.metadata["instruction"]): n.name for n in read_pte(low.pte).programs[0].graph.nodes
             if "instruction" in n.metadata}
    out: dict[str, list[str]] = {}
    for instruction, handles in rec._debug_handle_map["forward"].items():
        for h in handles_of(handles):
            for source in by_handle.get(h, []):
                if names[int(instruction)] not in out.setdefault(source, []):
                    out[source].append(names[int(instruction)])
    return out


@pytest.fixture(scope="module", params=[CNN, TRANSFORMER])
def lowering(request: Any) -> Lowered:
    return lowered_or_skip(request.param, "xnnpack")


def test_the_map_read_without_torch_is_what_executorchs_inspector_finds(lowering: Lowered) -> None:
    from tests.torch_reference import stored

    theirs = stored(lowering.etrecord, "inspector_source_to_pte", lambda: _inspectors_map(lowering))
    mine = etrecord_source_to_pte(lowering.etrecord, read_pte(lowering.pte).programs[0])
    assert mine and mine == theirs
    assert lowering.result["source_to_pte"] == mine  # the lower job's result is this map


def test_the_lowering_views_diff_pairs_each_op_with_a_node_its_handles_name(lowering: Lowered) -> None:
    source = read_archive(lowering.source).program()
    pte = read_pte(lowering.pte).programs[0]
    to_pte = lowering.result["source_to_pte"]
    session = lowered_session(source, pte, to_pte, "source", "pte")
    assert {k.method for k in session.mapping.links} == {DEBUG_HANDLE}
    diff = diff_programs(session.left, session.right, session.mapping)  # what the view's diff panel is given
    calls = [n.name for n in source.graph.nodes if n.op is NodeOp.CALL_FUNCTION and to_pte.get(n.name)]
    wrong = {a: b for a, b in diff.matching.a_to_b.items() if a in to_pte and b not in to_pte[a]}
    assert not wrong
    by_handle = [a for a in calls if diff.matching.method.get(a) == PROVENANCE]
    assert by_handle and all(session.counterparts(LEFT, a) for a in calls)
