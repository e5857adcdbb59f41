"""The compare session on real decompositions by this torch: conv + batchnorm training IR lowered to core ATen (one to
one links from torch's provenance), the torch.export tutorial's custom table (conv2d becomes two nodes: one to many),
the op diff rows and their non-core flags, the best-effort mapping between two programs, and the linked highlight.
No Qt: the decompose job runs in this process, once per session."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.compare.decomposition import Decomposition
from pt2_viewer.core.compare.session import (
    LEFT,
    RIGHT,
    LinkedDocumentModel,
    session_from_decomposition,
    session_from_programs,
)
from pt2_viewer.core.decompose.job import run_job
from pt2_viewer.core.diff.program_diff import diff_programs
from pt2_viewer.core.graph.document import MATCH, SELECTED
from pt2_viewer.core.graph.op_stats import op_counts as program_op_counts
from pt2_viewer.core.graph.op_stats import op_of_target
from pt2_viewer.core.jobs.schemas.decompose import DecomposeResult
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)

TABLES = Path(__file__).parents[2] / "tables"


@pytest.fixture(scope="session")
def decomposed(pt2_path: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory,  # noqa: F811
               ) -> Callable[[str], dict[str, Any]]:
    """`decomposed(to)` -> the decompose job's result for batchnorm_train (conv + batchnorm, training IR)."""
    src = pt2_path("batchnorm_train")
    done: dict[str, dict[str, Any]] = {}

    def get(to: str) -> dict[str, Any]:
        if to not in done:
            out = tmp_path_factory.mktemp("compare-session")
            result = run_job({"program": str(src), "to": to, "output": str(out / f"bn.{Path(to).stem}.pt2")}, out,
                             lambda e: None)
            assert result["ok"], result.get("error")
            done[to] = result
        return done[to]

    return get


def session_for(result: dict[str, Any]):  # type: ignore[no-untyped-def]
    before = read_archive(result["program"]).program()
    after = read_archive(result["output"]).program()
    decomposition = Decomposition.from_decompose(DecomposeResult.from_json(result), Path(result["output"]).parent)
    return session_from_decomposition(decomposition, before, after)


def test_core_aten_links_conv2d_and_convolution_both_ways(decomposed: Callable[[str], dict[str, Any]]) -> None:
    s = session_for(decomposed("core"))
    assert s.method == "decomposition"
    assert s.counterparts(LEFT, "conv2d") == ["convolution"]
    assert s.counterparts(RIGHT, "convolution") == ["conv2d"]
    assert s.link_methods(LEFT, "conv2d") == {"convolution": "from_node"}
    assert s.describe_link(LEFT, "conv2d") == "conv2d became convolution (from_node)"
    assert s.describe_link(RIGHT, "_native_batch_norm_legit_functional") == \
        "_native_batch_norm_legit_functional came from batch_norm (from_node)"
    # in-place counter updates became functional adds
    assert s.counterparts(LEFT, "add_") == ["add"] and s.counterparts(LEFT, "add__1") == ["add_1"]
    assert s.counterparts(LEFT, "no_such_node") == []
    assert s.describe_link(LEFT, "no_such_node") == "no_such_node has no counterpart on the other side"


def test_custom_table_splits_conv2d_one_to_many(decomposed: Callable[[str], dict[str, Any]]) -> None:
    result = decomposed(str(TABLES / "tutorial_conv2d.py"))
    s = session_for(result)
    after = {n.name: n.target for n in s.right.graph.nodes}
    became = s.counterparts(LEFT, "conv2d")
    assert sorted(after[n] for n in became) == ["torch.ops.aten.convolution.default", "torch.ops.aten.mul.Tensor"]
    for node in became:  # many to one, read backwards
        assert s.counterparts(RIGHT, node) == ["conv2d"]
    assert s.row("aten.mul.Tensor") is not None and s.row("aten.mul.Tensor").change == 1  # type: ignore[union-attr]


def test_op_rows_flag_non_core_and_match_the_reader(decomposed: Callable[[str], dict[str, Any]]) -> None:
    result = decomposed("core")
    s = session_for(result)
    rows = {r.op: r for r in s.rows}
    assert (rows["aten.conv2d.default"].before, rows["aten.conv2d.default"].after) == (1, 0)
    assert rows["aten.conv2d.default"].change_text == "-1"
    assert rows["aten.convolution.default"].change_text == "+1"
    assert rows["aten.mul.Tensor"].change_text == "0"
    flagged = [r.op for r in s.rows if r.non_core]
    assert flagged == ["aten._native_batch_norm_legit_functional.default"]
    assert s.non_core_total == 1
    assert "1 call outside the core ATen opset" in s.non_core_text()
    # the torch-free counts of the archives agree with what torch counted in the job
    assert {op: r.before for op, r in rows.items() if r.before} == dict(program_op_counts(s.left))
    assert {op: r.after for op, r in rows.items() if r.after} == dict(program_op_counts(s.right))
    assert s.nodes_for_op(LEFT, "aten.add_.Tensor") == ["add_", "add__1"]
    assert s.nodes_for_op(RIGHT, "aten.add_.Tensor") == []
    assert s.nodes_for_op(RIGHT, "aten.convolution.default") == ["convolution"]


def test_any_two_programs_get_a_best_effort_session(decomposed: Callable[[str], dict[str, Any]]) -> None:
    result = decomposed("core")
    before = read_archive(result["program"]).program()
    after = read_archive(result["output"]).program()
    s = session_from_programs(before, after, diff_programs(before, after).node_mapping(), "bn.pt2", "bn.core.pt2")
    assert s.method == "guess" and s.non_core_ops is None
    assert "decompose" in s.non_core_text()
    assert s.counterparts(LEFT, "mul") == ["mul"]
    assert s.counterparts(LEFT, "x") == ["x"]
    assert {(r.op, r.before, r.after) for r in s.rows} == \
        {(r["op"], r["before"], r["after"]) for r in result["op_diff"]}
    assert not any(r.non_core for r in s.rows)
    assert op_of_target("torch.ops.aten.conv2d.default") == "aten.conv2d.default"
    assert op_of_target("_operator.add") == "_operator.add"


def test_linked_nodes_paint_as_selected_even_inside_a_collapsed_group(
        decomposed: Callable[[str], dict[str, Any]]) -> None:
    result = decomposed("core")
    archive = read_archive(result["output"])
    model = LinkedDocumentModel(archive, archive.program())
    scene = model.level.scene
    # a node of the batch norm's module (the conv's module holds one op: it is drawn as that op, never collapsed)
    node = next(n for g in scene.groups.values() if g.path and g.path not in scene.leaves
                for n in g.nodes if n not in scene.folding.host)
    model.linked = [node]
    scene.expand_all()
    assert model.highlight().nodes[node] == SELECTED
    scene.collapse_all()
    group = scene.visible_item(node)
    assert group.startswith("group:")
    assert model.highlight().groups[group[len("group:"):]] == SELECTED
    model.linked = []
    model.marked = [node]
    assert model.highlight().groups[group[len("group:"):]] == MATCH
