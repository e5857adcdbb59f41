"""The doctor's fixes work: for every failing export call of the failing scripts in tests/scripts/doctor/ (written
the way users write them) the doctor offers a verified fix, a unified diff against the user's file in the user's
names, or says in words why no safe fix exists. Each offered diff is applied to a copy with the standard `patch`
tool and the copy exported again: the call must export. Runs are real (torch 2.13 in a worker) and cached
(doctor_runs.py)."""
from __future__ import annotations

import re

import pytest

from tests.core.export.doctor_runs import SCRIPTS, diagnosed, export, patched_copy

# script -> (the fix kinds its failing call gets, verified) or None where only a reason can be given
EXPECTED = {
    "branch_on_sum": {"torch_cond"},  # if y.sum() > 0 with tensor branches
    "item_branch": {"torch_check"},  # if m > 10 on m = limit.item()
    "tolist_loop": {"torch_check"},  # if i < table.shape[0] over idx.tolist()
    "equal_dims": {"dynamic_shapes"},  # batch_b = batch_a
    "narrowed_by_if": {"dynamic_shapes"},  # n = Dim('n', min=5, max=64)
    "reshape_specialized": {"dynamic_shapes"},  # batch = 4
    "two_exports": {"dynamic_shapes"},  # Dim.DYNAMIC -> Dim.STATIC in the literal, second call only
    "strict_python": {"strict"},  # id(x) under strict=True
    "custom_op_no_fake": {"register_fake"},
    "item_as_size": {"torch_check"},  # range(n.item()): torch._check(steps == 3) pins it (and says so)
    "spec_from_code": {"dynamic_shapes"},  # a dict comprehension: its entries are set after it
    # the module-level convention (model, example_args, dynamic_shapes, strict): those lines are the patch targets
    "module_equal_dims": {"dynamic_shapes"},  # batch_b = batch_a
    "module_narrowed_by_if": {"dynamic_shapes"},  # the inline Dim("n", min=1, max=64) gets min=3
    "module_reshape_specialized": {"dynamic_shapes"},  # the inline Dim("batch") becomes Dim.STATIC
    "module_suggested_fixes": {"dynamic_shapes"},  # the tutorial's d1 = 4; dy = dx
    "module_branch_strict": {"torch_cond"},  # strict = True and `if x.sum() > 0`: both branches kept
    "module_strict_python": {"strict"},  # strict = True -> strict = False
    "module_item_range": None,  # the tutorial's range(a): the model fails eagerly too, said honestly
}
TORCH_WORDS = re.compile(r"\b[su]\d+\b|L\[|Eq\(|int_oo|unhinted")


def failed(report: dict) -> list[dict]:
    return [c for c in report["calls"] if not c["ok"]]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_failing_call_gets_a_verified_fix_or_a_reason(name, tmp_path):
    script, report = diagnosed(name)
    calls = failed(report)
    assert calls, f"{name} is meant to fail"
    expected = EXPECTED[name]
    diffs = []
    for call in calls:
        items = call["problems"]["items"]
        verified = [p for p in items if p["diff"]]
        for p in items:
            assert bool(p["diff"]) == p["verified"], "a diff is shown only when it was verified"
            for said in (p["message"], p["reason"], p["narrows"], *(t["failure"] for t in p["tried"])):
                assert not TORCH_WORDS.search(said), f"torch's own symbols reach the user: {said}"
            assert "u0" not in p["diff"] and "DimHint" not in p["diff"] and "int_oo" not in p["diff"]
            for t in p["tried"]:
                assert t["verified"] is False and t["failure"]
        if expected is None:
            assert not verified, f"{name}: no fix should be verified"
            assert all(p["reason"] for p in items), "without a fix, the doctor says why in words"
            continue
        assert {p["fix_kind"] for p in verified} == expected, [(p["kind"], p["reason"], p["tried"]) for p in items]
        for p in verified:
            assert p["diff"].startswith(f"--- a/{script.name}\n+++ b/{script.name}\n")
        diffs += [p["diff"] for p in verified]
    if not diffs:
        return
    again = export(patched_copy(script, diffs, tmp_path), tmp_path / "out", save=False)
    assert [c["ok"] for c in again["calls"]] == [True] * len(report["calls"])


def test_fixes_are_in_the_users_names():
    _, report = diagnosed("item_branch")
    [p] = failed(report)[0]["problems"]["items"]
    assert p["fix"] == "torch._check(m > 10)"
    assert p["narrows"] == "the exported program will reject inputs where m <= 10"
    assert "torch.cond(m > 10" in p["reason"]  # what to do if both branches matter: a sketch, no diff
    _, report = diagnosed("tolist_loop")
    [p] = failed(report)[0]["problems"]["items"]
    assert "+            torch._check(i < table.shape[0])\n             if i < table.shape[0]:" in p["diff"]


def test_spec_fixes_edit_the_users_dim_lines():
    _, report = diagnosed("equal_dims")
    p = failed(report)[0]["problems"]["items"][0]
    assert '-batch_b = Dim("batch_b")\n+batch_b = batch_a\n' in p["diff"]
    _, report = diagnosed("two_exports")
    assert report["calls"][0]["ok"] and report["calls"][0]["problems"]["items"] == []
    p = report["calls"][1]["problems"]["items"][0]
    assert '+dynamic = export(Proj(), (x,), dynamic_shapes={"x": (Dim.AUTO, Dim.STATIC)})' in p["diff"]
    assert p["narrows"] == "the exported program accepts only x.shape[1] == 3"


def test_a_spec_built_by_code_gets_its_entries_set_after_it():
    _, report = diagnosed("spec_from_code")
    p = failed(report)[0]["problems"]["items"][0]
    assert p["message"] == "export requires a.shape[0] == b.shape[0]"
    assert '+shapes["b"][0] = shapes["a"][0]\n ep = torch.export.export(' in p["diff"]


def test_module_level_fixes_edit_the_users_assignments():
    _, report = diagnosed("module_equal_dims")
    [call] = failed(report)
    assert call["source"] == "convention"
    p = call["problems"]["items"][0]
    assert p["message"] == "export requires a.shape[0] == b.shape[0]"
    assert '-batch_b = Dim("batch_b")\n+batch_b = batch_a\n' in p["diff"]
    guard = next(q for q in call["problems"]["items"] if q["kind"] == "guard_added")
    assert guard["message"] == "export requires a.shape[0] == b.shape[0]"
    p = failed(diagnosed("module_narrowed_by_if")[1])[0]["problems"]["items"][0]
    assert '+dynamic_shapes = {"x": {0: Dim("n", min=3, max=64)}}' in p["diff"]
    assert p["message"].startswith("export requires 3 <= x.shape[0] <= 64")
    p = failed(diagnosed("module_reshape_specialized")[1])[0]["problems"]["items"][0]
    assert '+dynamic_shapes = {"x": (Dim.STATIC, Dim.STATIC)}' in p["diff"]
    p = failed(diagnosed("module_suggested_fixes")[1])[0]["problems"]["items"][0]
    assert '+dx, dy, d1 = torch.export.dims("dx", "dy", "d1")\n+d1 = 4\n+dy = dx\n' not in p["diff"]
    assert "+d1 = 4\n+dy = dx\n" in p["diff"]
    p = failed(diagnosed("module_strict_python")[1])[0]["problems"]["items"][0]
    assert "-strict = True\n+strict = False\n" in p["diff"]


def test_a_needed_int_is_pinned_or_said_honestly():
    _, report = diagnosed("item_as_size")
    [p] = [q for q in failed(report)[0]["problems"]["items"] if q["verified"]]
    assert "+        torch._check(steps == 3)\n         for _ in range(steps):" in p["diff"]
    assert p["narrows"].startswith("the exported program accepts only inputs where steps == 3")
    assert "To keep the program general, rewrite it" in p["reason"]
    _, report = diagnosed("module_item_range")
    [p] = failed(report)[0]["problems"]["items"]
    assert "the model fails on the example inputs even without export (TypeError" in p["reason"]


def test_the_tutorials_failing_calls_get_verified_fixes_or_reasons(tmp_path):
    from tests.programs import SEED_TUTORIAL

    script, report = diagnosed("tutorial", SEED_TUTORIAL)
    calls = {c["index"]: c for c in failed(report)}
    kinds = {i: {p["fix_kind"] for p in c["problems"]["items"] if p["verified"]} for i, c in calls.items()}
    by_model = {(c["model"], c["line"]["line"]): kinds[i] for i, c in calls.items()}
    lines = script.read_text().splitlines()
    at = {name: lines.index(code) + 1 for name, code in (
        ("bad1", "    export(Bad1(), (torch.randn(3, 3),))"), ("bad2", "    export(Bad2(), (torch.randn(3, 3),))"),
        ("range", "    export(Foo(), inps, strict=False)"))}
    assert by_model[("Bad1", at["bad1"])] == {"torch_cond"}  # if x.sum() > 0: both branches kept
    assert by_model[("Bad2", at["bad2"])] == {"rewrite"}  # x.data[0, 0] = 3 -> x[0, 0] = 3
    assert [k for (m, _), k in by_model.items() if m == "DynamicModel"] == [{"dynamic_shapes"}] * 2
    assert by_model[("Foo", at["range"])] == set()  # range(a): a reason, no diff
    [p] = calls[[i for i, c in calls.items() if c["line"]["line"] == at["range"]][0]]["problems"]["items"]
    assert "fails on the example inputs even without export" in p["reason"]  # torch.cat of ints: honest, no fix
    foo = [c for c in calls.values() if c["model"] == "Foo" and c["line"]["line"] != at["range"]]
    assert [kinds[c["index"]] for c in foo] == [{"dynamic_shapes"}]
    fix = next(p for p in foo[0]["problems"]["items"] if p["verified"])
    assert '+dx, dy, d1 = torch.export.dims("dx", "dy", "d1")\n+d1 = 4\n+dy = dx\n' not in fix["diff"]
    assert "+d1 = 4\n+dy = dx\n" in fix["diff"]  # torch's own suggestion, after the line that defines the dims
    diffs = [p["diff"] for c in calls.values() for p in c["problems"]["items"] if p["diff"]]
    again = export(patched_copy(script, diffs, tmp_path), tmp_path / "out", save=False)
    ok = {c["index"]: c["ok"] for c in again["calls"]}
    assert all(ok[i] for i in calls if kinds[i]), ok


def test_a_fake_kernel_goes_beside_the_op_in_the_users_other_file(tmp_path):
    folder = SCRIPTS / "two_files"
    script, report = diagnosed("uses_my_ops", folder / "uses_my_ops.py", (folder / "my_ops.py",))
    [call] = failed(report)
    [fix] = [p for p in call["problems"]["items"] if p["verified"]]
    assert fix["fix_kind"] == "register_fake" and fix["diff"].startswith("--- a/my_ops.py\n+++ b/my_ops.py\n")
    assert "+@double.register_fake\n+def _(x):\n+    return torch.empty_like(x)" in fix["diff"]
    again = export(patched_copy(script, [fix["diff"]], tmp_path), tmp_path / "out", save=False)
    assert [c["ok"] for c in again["calls"]] == [True]
