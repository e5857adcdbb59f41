"""The structural diff (core/diff/) on real pairs of exports: what it matches, classifies and rolls up."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pt2_viewer.core.diff.nodes import ADDED, CHANGED, REMOVED
from pt2_viewer.core.diff.program_diff import ProgramDiff, diff_programs
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.pt2.reader import read_archive
from tests.diff_programs import diff_program_path
from tests.programs import member_named, pt2_path, read_members, write_members  # noqa: F401  (pt2_path: a fixture)


def _program(name: str) -> Program:
    return read_archive(diff_program_path(name)).program()


def _diff(a: str, b: str) -> ProgramDiff:
    return diff_programs(_program(a), _program(b))


def test_one_changed_block_shows_that_block_and_nothing_else() -> None:
    diff = _diff("resnet", "resnet_block_changed")
    assert diff.nodes, "the swapped activation must show"
    assert {c.module for c in diff.nodes} == {"layer2.1.relu"}
    assert all(c.kind == CHANGED and c.what == ["op"] for c in diff.nodes)
    assert {c.details["op"] for c in diff.nodes} == {("aten.relu_.default", "aten.gelu.default")}
    assert diff.kinds() == {"ops", "any"}
    assert not diff.signature and not diff.ranges
    # every relu after the block was renamed (relu__9 is now relu__7), and still pairs with its own
    shifted = {a: b for a, b in diff.matching.a_to_b.items() if a.startswith("relu") and a != b}
    assert len(shifted) >= 8
    a, b = _program("resnet"), _program("resnet_block_changed")
    module_a = {n.name: n.module_path for n in a.graph.nodes}
    module_b = {n.name: n.module_path for n in b.graph.nodes}
    assert all(module_a[x] == module_b[y] for x, y in diff.matching.a_to_b.items())
    # the roll-up names the block and its ancestors only
    assert [m.path for m in diff.modules] == ["", "layer2", "layer2.1", "layer2.1.relu"]
    assert diff.modules[2].text() == "2 op changes"


def test_a_model_and_its_bf16_copy_differ_in_dtypes_only() -> None:
    diff = _diff("resnet", "resnet_bf16")
    assert diff.kinds() == {"dtypes", "any"}
    assert diff.summary["added"] == diff.summary["removed"] == 0
    assert diff.nodes and all(c.what == ["dtype"] for c in diff.nodes)
    weight = next(s for s in diff.signature if s.a and s.a.target == "conv1.weight")
    assert weight.what == ["dtype"] and not weight.structural
    assert (weight.a and weight.a.output.text, weight.b and weight.b.output.text) == \
        ("f32[64, 3, 7, 7]", "bf16[64, 3, 7, 7]")


def test_a_static_and_a_dynamic_export_differ_in_dynamic_only() -> None:
    diff = _diff("resnet_static", "resnet")
    assert diff.kinds() == {"dynamic", "any"}
    assert diff.nodes and all(c.what == ["shape"] and c.dynamic for c in diff.nodes)
    assert [(r.kind, r.a, r.b_range) for r in diff.ranges] == [(ADDED, None, (0, None))]
    x = next(s for s in diff.signature if s.section == "inputs")
    assert x.what == ["dynamic"] and not x.structural
    # and back again: the symbol disappears
    back = _diff("resnet", "resnet_static")
    assert back.kinds() == {"dynamic", "any"}
    assert [r.kind for r in back.ranges] == [REMOVED]


def test_symbols_pair_across_exports_so_equal_dynamic_shapes_are_no_change() -> None:
    diff = _diff("resnet", "resnet_block_changed")
    assert len(diff.symbols) == 1  # the batch
    assert not any("shape" in c.what for c in diff.nodes)


def test_gpt2_and_its_core_aten_decomposition_roll_ops_up_per_module() -> None:
    a, b = _program("gpt2"), _program("gpt2_core")
    diff = diff_programs(a, b)
    assert "ops" in diff.kinds()
    rows = {m.path: m for m in diff.modules}
    for layer in ("transformer.h.0", "transformer.h.1"):
        attn = rows[f"{layer}.attn"]
        assert attn.added > 0 and attn.what["op"] > 0
    # the two identical layers decompose alike
    assert rows["transformer.h.0"].to_json() | {"path": ""} == rows["transformer.h.1"].to_json() | {"path": ""}
    root = rows[""]
    assert (root.added, root.removed, root.changed) == (diff.count(ADDED), diff.count(REMOVED), diff.count(CHANGED))
    # provenance (torch's from_node, kept in the archive): the nodes attention decomposed into came from it
    sdpa = [n.name for n in a.graph.nodes if n.target == "torch.ops.aten.scaled_dot_product_attention.default"]
    assert len(sdpa) == 2 and {diff.matching.method[n] for n in sdpa} == {"provenance"}
    added_in_attention = [c.b for c in diff.nodes if c.kind == ADDED and c.module.endswith(".attn")]
    assert added_in_attention and all(diff.matching.origin.get(n or "") in ([s] for s in sdpa)
                                      for n in added_in_attention)


@pytest.mark.parametrize("name", ["resnet", "gpt2", "gpt2_core"])  # gpt2_core: provenance naming its own nodes
def test_a_program_against_itself_has_no_change(name: str) -> None:
    diff = _diff(name, name)
    assert not diff.nodes and not diff.signature and not diff.ranges and diff.kinds() == set()
    assert diff.modules[0].text() == "no change"


def test_the_diff_reads_no_torch(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; sys.modules['torch'] = None; from pt2_viewer.core.pt2.reader import read_archive; "
            "from pt2_viewer.core.diff.program_diff import diff_programs; "
            "print(len(diff_programs(read_archive(sys.argv[1]).program(), read_archive(sys.argv[2]).program()).nodes))")
    out = subprocess.run([sys.executable, "-c", code, str(diff_program_path("resnet")),
                          str(diff_program_path("resnet_block_changed"))], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2"


@pytest.mark.parametrize("case", ["topk_cond", "cond_map", "unbacked", "tutorial_auto_dims", "tutorial_mixed",
                                  "custom_op", "batchnorm_train", "split_chunks", "two_programs", "input_kinds"])
def test_every_kind_of_program_against_a_fresh_read_of_itself_has_no_change(case: str, pt2_path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """HOP subgraphs, unbacked symbols (paired by the values that make them), ranges keyed by expressions
    (`s17*s77`), custom ops, buffer mutations, several programs in one archive."""
    path = pt2_path(case)
    for program in read_archive(path).programs:
        diff = diff_programs(program, read_archive(path).program(program.name))
        assert diff.kinds() == set(), (program.name, diff.summary, diff.ranges, diff.signature)


def test_symbols_named_apart_pair_by_the_input_dims(pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """The same export with every symbol renamed (s15 -> s5, s17 -> s7, s77 -> s9, as another torch might name
    them): shapes, ranges (`s17*s77` too) and guards compare in B's names, so nothing changed."""
    src = pt2_path("tutorial_auto_dims")
    members = read_members(src)
    name = member_named(members, "models/model.json")
    text = members[name].decode()
    for old, new in (("s15", "s5"), ("s17", "s7"), ("s77", "s9")):
        text = re.sub(rf"\b{old}\b", new, text)
    members[name] = text.encode()
    renamed = write_members(tmp_path / "renamed.pt2", members)
    diff = diff_programs(read_archive(src).program(), read_archive(renamed).program())
    assert diff.symbols == {"s15": "s5", "s17": "s7", "s77": "s9"}
    assert diff.kinds() == set(), (diff.summary, diff.ranges, diff.nodes[:3])
