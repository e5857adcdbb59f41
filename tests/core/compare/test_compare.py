"""The torch-free node mapping: the best-effort guess between two programs, and the mapping file's round trip.

The guess is checked on plain node records (each rule on its own) and on real archives read by the viewer's reader: a
training-IR program against the same program decomposed by torch, where the right answer is known.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.compare.mapping import (
    Link,
    NodeMapping,
    guess_mapping,
    guess_program_mapping,
    read_mapping,
    write_mapping,
)
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)


def node(name: str, target: str, module_path: str = "") -> dict[str, str]:
    return {"name": name, "target": target, "module_path": module_path}


def test_each_rule_in_order_of_trust() -> None:
    before = [
        node("x", "x"),
        node("linear", "torch.ops.aten.linear.default", "fc"),
        node("add_", "torch.ops.aten.add_.Tensor", "counter"),
        node("gelu", "torch.ops.aten.gelu.default", "act"),
        node("output", "output"),
    ]
    after = [
        node("x", "x"),
        node("linear", "torch.ops.aten.linear.default", "fc"),  # same name and target
        node("add", "torch.ops.aten.add.Tensor", "counter"),  # same module, same op (in place -> functional)
        node("mul", "torch.ops.aten.mul.Tensor", "act"),  # gelu decomposed: only the module tells
        node("erf", "torch.ops.aten.erf.default", "act"),
        node("sum", "torch.ops.aten.sum.default", ""),  # nowhere to come from
        node("output", "output"),
    ]
    m = guess_mapping(before, after)
    links = {(k.before, k.after): k.method for k in m.links}
    assert links == {
        ("x", "x"): "name+target",
        ("linear", "linear"): "name+target",
        ("output", "output"): "name+target",
        ("add_", "add"): "module_path+op",
        ("gelu", "mul"): "module_path",
        ("gelu", "erf"): "module_path",
    }
    assert [k.after for k in m.after_of("gelu")] == ["mul", "erf"]  # one to many
    assert m.unmapped_after == ["sum"] and m.unmapped_before == []


def test_same_name_with_another_target_is_a_weaker_link() -> None:
    m = guess_mapping([node("conv", "torch.ops.aten.conv2d.default", "c")],
                      [node("conv", "torch.ops.aten.convolution.default", "c")])
    assert m.links == [Link("conv", "conv", "name")]


def test_leftovers_go_to_the_nearest_node_of_their_module() -> None:
    before = [node("a", "torch.ops.aten.relu.default", "blk"), node("b", "torch.ops.aten.tanh.default", "blk")]
    after = [node("p", "torch.ops.aten.exp.default", "blk"), node("q", "torch.ops.aten.exp.default", "blk"),
             node("r", "torch.ops.aten.div.Tensor", "blk"), node("s", "torch.ops.aten.sub.Tensor", "blk")]
    m = guess_mapping(before, after)
    assert [(k.before, k.after) for k in m.links] == [("a", "p"), ("a", "q"), ("b", "r"), ("b", "s")]


def test_real_programs_training_ir_against_torchs_decomposition(pt2_path: Callable[[str], Path]) -> None:
    before = read_archive(pt2_path("batchnorm_train")).program()
    after = read_archive(pt2_path("batchnorm_train_decomposed")).program()
    m = guess_program_mapping(before, after)
    after_targets = after.graph.node_by_name
    conv = m.after_of("conv2d")
    assert [after_targets[k.after].target for k in conv] == ["torch.ops.aten.convolution.default"]
    bn = m.after_of("batch_norm")
    assert [after_targets[k.after].target for k in bn] == ["torch.ops.aten._native_batch_norm_legit_functional.default"]
    in_place = [n.name for n in before.graph.nodes if n.target == "torch.ops.aten.add_.Tensor"]
    assert len(in_place) == 2
    for name in in_place:
        assert [after_targets[k.after].target for k in m.after_of(name)] == ["torch.ops.aten.add.Tensor"]
    placeholders = [n.name for n in before.graph.nodes if n.op.value == "placeholder"]
    assert all(m.after_of(p) == [Link(p, p, "name+target")] for p in placeholders)
    assert m.unmapped_after == []


def test_mapping_file_round_trip_and_bad_files(tmp_path: Path) -> None:
    m = NodeMapping(before_nodes=["a", "b"], after_nodes=["c", "d", "e"],
                    links=[Link("a", "c", "from_node"), Link("a", "d", "from_node"), Link("b", "e", "stack_trace")],
                    before_label="m.pt2 / model", after_label="m.core.pt2 / model")
    path = tmp_path / "m.mapping.json"
    write_mapping(m, path)
    doc = json.loads(path.read_text())
    assert doc["before_to_after"]["a"] == [{"node": "c", "method": "from_node"}, {"node": "d", "method": "from_node"}]
    assert doc["after_to_before"]["e"] == [{"node": "b", "method": "stack_trace"}]
    assert doc["method_counts"] == {"from_node": 2, "stack_trace": 1}
    assert read_mapping(path) == m
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind

    path.write_text(json.dumps({**doc, "format": "something-else"}))
    with pytest.raises(ValueError, match="not a node mapping file"):
        read_mapping(path)
    path.write_text(json.dumps({**doc, "version": 99}))
    with pytest.raises(ValueError, match="newer than this viewer reads"):
        read_mapping(path)


def test_compare_never_imports_torch() -> None:
    code = ("import sys, pt2_viewer.core.compare.mapping, pt2_viewer.core.decompose.job, pt2_viewer.core.run.job, "
            "pt2_viewer.core.cli.run, pt2_viewer.core.cli.decompose; print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
