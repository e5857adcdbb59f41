"""Our reader (JSON only, no torch) against torch's own loader, on real programs exported by this torch.

For every cached program (all of ExportDB plus the hand-made ones in tests/programs.py) `archive_info` must equal what
`tests/torch_reference.py` derives from `torch.export`'s deserialized `ExportedProgram`, field by field, and every
graph's edges must equal the FX graph's, after the one documented reconciliation of multi-output ops. torch's answers
are stored with each fixture (`make fixtures`), so these tests do not load every program with torch again.
"""
from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.core.model.program import Graph
from pt2_viewer.core.pt2.info import archive_info
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import CASE_NAMES, REPO_ROOT, build_all, pt2_path  # noqa: F401  (pt2_path is a fixture)
from tests.torch_reference import (
    EdgeKey,
    expected_edges,
    expected_hop_subgraphs,
    expected_info,
    folds_into_producer,
    load_programs,
)

PROGRAM_FIELDS = ["name", "dialect", "node_count", "nodes", "subgraphs", "inputs", "outputs", "range_constraints"]


@functools.cache
def _expected(path: Path) -> dict[str, Any]:
    return expected_info(path)


def _ours(path: Path) -> dict[str, Any]:
    """archive_info as `--json` prints it (tuples become lists), programs in name order like the expectation."""
    info = json.loads(json.dumps(archive_info(read_archive(path))))
    info["programs"].sort(key=lambda p: p["name"])
    return info


def _our_edges(graph: Graph, prefix: str = "") -> dict[str, list[EdgeKey]]:
    out = {prefix: [EdgeKey(e.src, e.dst, e.value) for e in graph.edges]}
    for node in graph.nodes:
        for sub in node.subgraphs:
            out.update(_our_edges(sub, f"{prefix}/{sub.name}" if prefix else sub.name))
    return out


def _field_mismatches(case: str, program: str, expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    problems = []
    for field in PROGRAM_FIELDS:
        if expected[field] != got.get(field):
            problems.append(
                f"{case}/{program}: field {field!r} differs\n"
                f"  torch: {json.dumps(expected[field])[:1500]}\n"
                f"  ours:  {json.dumps(got.get(field))[:1500]}"
            )
    return problems


@pytest.mark.parametrize("case", CASE_NAMES)
def test_info_matches_torch(case: str, pt2_path) -> None:
    path = pt2_path(case)
    expected, got = _expected(path), _ours(path)
    assert (got["torch_version"], got["schema_version"]) == (expected["torch_version"], expected["schema_version"])
    assert [p["name"] for p in got["programs"]] == [p["name"] for p in expected["programs"]]
    problems: list[str] = []
    for exp_program, got_program in zip(expected["programs"], got["programs"]):
        problems += _field_mismatches(case, exp_program["name"], exp_program, got_program)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", CASE_NAMES)
def test_edges_match_torch(case: str, pt2_path) -> None:
    path = pt2_path(case)
    expected = expected_edges(path)
    archive = read_archive(path)
    assert sorted(p.name for p in archive.programs) == sorted(expected)
    problems: list[str] = []
    for program in archive.programs:
        ours = _our_edges(program.graph)
        assert sorted(ours) == sorted(expected[program.name]), f"{case}/{program.name}: different subgraphs"
        for graph_path, edges in ours.items():
            where = f"{case}/{program.name} graph {graph_path or '<top>'}"
            if len(edges) != len(set(edges)):
                problems.append(f"{where}: duplicate edges {sorted(e for e in edges if edges.count(e) > 1)}")
            missing = expected[program.name][graph_path] - set(edges)
            extra = set(edges) - expected[program.name][graph_path]
            if missing or extra:
                problems.append(f"{where}: edges torch has but we lack {sorted(missing)}; we add {sorted(extra)}")
    assert not problems, "\n".join(problems)


def _hop_mismatches(where: str, graph: Graph, theirs: dict[str, dict[str, list[str]]], at: str = "") -> list[str]:
    """Compare which subgraphs each HOP node takes, in our graph and torch's (stored with the fixture, per graph
    path), recursing into the subgraphs."""
    ours = {n.name: [g.name for g in n.subgraphs] for n in graph.nodes if n.subgraphs}
    problems = [] if ours == theirs.get(at) else [f"{where}: ours {ours}, torch {theirs.get(at)}"]
    for node in graph.nodes:
        for sub in node.subgraphs:
            problems += _hop_mismatches(f"{where}/{sub.name}", sub, theirs, f"{at}/{sub.name}" if at else sub.name)
    return problems


@pytest.mark.parametrize("case", CASE_NAMES)
def test_hop_nodes_hold_their_subgraphs(case: str, pt2_path) -> None:
    path = pt2_path(case)
    torch_hops = expected_hop_subgraphs(path)
    problems: list[str] = []
    for program in read_archive(path).programs:
        problems += _hop_mismatches(f"{case}/{program.name}", program.graph, torch_hops[program.name])
    assert not problems, "\n".join(problems)


def test_multi_output_rule_on_topk_and_cond(pt2_path) -> None:
    """The reconciliation rule, shown on one program: topk and cond are one node each in our model, carrying the
    values torch's getitem nodes are named after."""
    path = pt2_path("topk_cond")
    ep = load_programs(path)["model"]
    fx = {n.name: n for n in ep.graph.nodes}
    folded = [n.name for n in ep.graph.nodes if folds_into_producer(n)]
    assert {fx[name].args[0].name for name in folded} == {"topk", "cond"}

    program = read_archive(path).programs[0]
    ours = {n.name: n for n in program.graph.nodes}
    assert not set(folded) & set(ours), "getitem nodes must fold into their producer"
    topk_outputs = sorted(n.name for n in ep.graph.nodes if folds_into_producer(n) and n.args[0].name == "topk")
    assert sorted(ours["topk"].outputs) == topk_outputs
    edges = {(e.src, e.dst, e.value) for e in program.graph.edges}
    for name in folded:
        getitem = fx[name]
        for user in getitem.users:
            dst = "output" if user.op == "output" else user.name
            assert (getitem.args[0].name, dst, name) in edges
    assert ("true_graph_0", "cond", "true_graph_0") in edges
    assert [g.name for g in ours["cond"].subgraphs] == ["true_graph_0", "false_graph_0"]


def test_exportdb_failures_are_the_cases_torch_marks_unsupported() -> None:
    """Every ExportDB case torch calls SUPPORTED exports and is in the parity tests; those it cannot export are
    listed here with torch's reason (and skipped, with that reason, above)."""
    from torch._export.db.case import SupportLevel
    from torch._export.db.examples import all_examples

    built, failed = build_all()
    exportdb_failed = {name: why for name, why in failed.items() if name.startswith("exportdb_")}
    unsupported = {
        f"exportdb_{name}" for name, case in all_examples().items() if case.support_level != SupportLevel.SUPPORTED
    }
    listing = "\n".join(f"  {name}: {why}" for name, why in sorted(exportdb_failed.items()))
    print(f"ExportDB: {len(all_examples())} cases, {len(exportdb_failed)} not exportable by torch "
          f"{torch.__version__}:\n{listing}")
    assert set(exportdb_failed) <= unsupported, f"SUPPORTED ExportDB cases failed to export:\n{listing}"
    assert not {name for name in failed if not name.startswith("exportdb_")}, f"hand-made programs failed: {failed}"
    assert sum(name.startswith("exportdb_") for name in built) >= 30


def _program(path: Path, name: str = "model") -> dict[str, Any]:
    return next(p for p in _ours(path)["programs"] if p["name"] == name)


def test_fixtures_cover_what_they_claim(pt2_path) -> None:
    """Guards the fixtures: each hand-made program still holds the feature it exists for."""
    kinds = lambda p, side: {e["kind"] for e in p[side]}  # noqa: E731
    targets = lambda p: {n["target"] for n in p["nodes"]}  # noqa: E731

    dynamic = _program(pt2_path("dynamic_shapes"))["range_constraints"]
    assert [2, 1024] in dynamic.values() and [2, None] in dynamic.values()
    assert _program(pt2_path("unbacked"))["range_constraints"] == {"u0": [1, 6]}
    assert "torch.ops.pt2v_test.scale_add.default" in targets(_program(pt2_path("custom_op")))

    train = _program(pt2_path("batchnorm_train"))
    assert train["dialect"] == "TRAINING" and "BUFFER" in kinds(train, "inputs")
    assert "CONSTANT_TENSOR" in kinds(train, "inputs")
    decomposed = _program(pt2_path("batchnorm_train_decomposed"))
    assert decomposed["dialect"] == "ATEN" and "BUFFER_MUTATION" in kinds(decomposed, "outputs")
    assert "USER_INPUT_MUTATION" in kinds(_program(pt2_path("split_chunks")), "outputs")

    cond_map = _program(pt2_path("cond_map"))
    body = next(s for s in cond_map["subgraphs"] if s["name"] == "body_graph_0")
    assert [s["name"] for s in body["subgraphs"]] == ["true_graph_0", "false_graph_0"]
    assert "torch.ops.higher_order.map_impl" in targets(cond_map)

    assert [p["name"] for p in _ours(pt2_path("two_programs"))["programs"]] == ["model", "other"]


def test_cli_info_json_is_archive_info(pt2_path) -> None:
    path = pt2_path("two_programs")
    run = subprocess.run(
        [sys.executable, "-m", "pt2_viewer", "info", str(path), "--json"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    printed = json.loads(run.stdout)
    assert printed == json.loads(json.dumps(archive_info(read_archive(path))))
    assert sorted(p["name"] for p in printed["programs"]) == ["model", "other"]
