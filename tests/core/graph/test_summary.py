"""core/graph/summary.py: facts, op histogram, signature and symbol rows of the panels' test program (a real export)."""
from __future__ import annotations

import importlib.metadata
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.summary import (
    assert_expression,
    human_count,
    nodes_with_op,
    program_summary,
    signature_rows,
    symbol_rows,
)
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.util.words import format_bytes
from tests.core.graph.test_readable import PanelsProgram, panels_program, torch_statements  # noqa: F401  (panels_program: fixture)


def test_facts(panels_program: PanelsProgram) -> None:
    archive = read_archive(panels_program.path)
    facts = dict(program_summary(archive, archive.programs[0]).facts())
    assert facts["torch"] == importlib.metadata.version("torch")
    assert re.fullmatch(r"\d+\.\d+", facts["schema"])
    assert facts["dialect"] == "TRAINING"
    assert facts["archive"].startswith("pt2")
    assert facts["nodes"] == "24 in the top graph, 8 in 2 subgraphs"
    assert facts["inputs / outputs"] == "8 / 3"
    # Linear(4, 3): 12 + 3 floats; BatchNorm1d(3): weight, bias, mean, var (4 x 3 floats) + an int64 counter
    assert facts["weights"] == "7 tensors, 116 B, 28 elements"
    assert facts["symbols"] == "2"


def test_histogram_counts_what_torch_prints(panels_program: PanelsProgram) -> None:
    archive = read_archive(panels_program.path)
    summary = program_summary(archive, archive.programs[0])
    statements = torch_statements(panels_program.torch_readable)
    calls = Counter(m for line in statements for m in re.findall(r"= torch\.ops\.([\w.]+)\(", line))
    ours = {c.op: c.count for c in summary.histogram}
    assert {op: n for op, n in ours.items() if not op.startswith("_operator.")} == dict(calls)
    assert ours["_operator.ge"] == ours["_operator.le"] == 1
    assert summary.op_count == sum(ours.values()) == 17
    counts = [c.count for c in summary.histogram]
    assert counts == sorted(counts, reverse=True)
    assert [(c.short, c.kind) for c in summary.histogram[:2]] == [("_assert_scalar", "assert"),
                                                                   ("gt.Scalar", "elementwise")]
    assert {c.op: c.kind for c in summary.histogram}["aten.linear.default"] == "matmul"
    assert nodes_with_op(archive.programs[0].graph, "aten.gt.Scalar") == ["gt", "gt_1"]


def test_signature_rows(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    rows = signature_rows(program, program.graph)
    x = next(r for r in rows if r.name == "x")
    assert (x.direction, x.kind, x.dtype, x.shape, x.node) == ("input", "USER_INPUT", "float32", "[s77, 4]", "x")
    weight = next(r for r in rows if r.name == "p_lin_weight")
    assert (weight.kind, weight.target, weight.shape) == ("PARAMETER", "lin.weight", "[3, 4]")
    outputs = [(r.name, r.dtype, r.shape, r.node) for r in rows if r.direction == "output"]
    assert outputs == [("getitem_1", "float32", "[s77, 2]", "topk"), ("getitem_2", "int64", "[s77, 2]", "topk"),
                       ("nonzero", "int64", "[u0, 2]", "nonzero")]
    branch = program.graph.node_by_name["cond"].subgraphs[0]
    assert [(r.direction, r.name, r.kind, r.node) for r in signature_rows(program, branch)] == [
        ("input", "batch_norm", "SUBGRAPH_INPUT", "batch_norm"), ("output", "mul", "SUBGRAPH_OUTPUT", "mul")]


def test_symbol_rows(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    s77, u0 = symbol_rows(program, GraphIndex(program.graph))
    assert (s77.name, s77.range_text, s77.unbacked, s77.sources, s77.hint) == ("s77", "[2, 64]", False,
                                                                                 ("x.shape[0]",), 5)
    assert s77.nodes == ("x", "linear", "batch_norm", "cond", "gt_1", "topk")
    assert (u0.name, u0.unbacked, u0.sources, u0.asserts) == ("u0", True, (), ("u0 >= 0", "u0 <= 192"))
    assert u0.nodes == ("nonzero", "sym_size_int_1", "ge", "le")
    # inside a branch: that graph's users, the top graph's asserts
    branch = program.graph.node_by_name["cond"].subgraphs[1]
    s77_in, u0_in = symbol_rows(program, GraphIndex(branch))
    assert s77_in.nodes == ("batch_norm", "cos", "add") and u0_in.nodes == () and u0_in.asserts == u0.asserts


def test_newer_fields_show_as_warnings_and_unknown_fields(panels_program: PanelsProgram, tmp_path: Path) -> None:
    """A program written by a newer torch with a field this viewer does not know still summarises."""
    changed = tmp_path / "newer.pt2"
    with zipfile.ZipFile(panels_program.path) as src, zipfile.ZipFile(changed, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith("models/model.json"):
                doc = json.loads(data)
                doc["future_field"] = {"note": "x" * 500}
                data = json.dumps(doc).encode()
            dst.writestr(item, data)
    archive = read_archive(changed)
    summary = program_summary(archive, archive.programs[0])
    assert any("future_field" in w for w in summary.warnings)
    assert summary.unknown_fields["future_field"].startswith('{"note": "xxx')
    assert len(summary.unknown_fields["future_field"]) == 200


def test_small_formatters() -> None:
    assert assert_expression("Runtime assertion failed for expression u0 >= 0 on node 'ge'") == "u0 >= 0"
    assert assert_expression("something else") == "something else"
    assert (format_bytes(116), format_bytes(2048), format_bytes(3 * 1024**3)) == ("116 B", "2.0 KB", "3.0 GB")
    assert (human_count(28), human_count(1_500_000)) == ("28", "1.5M")
