"""The doctor's fix builders and patches on plain text (no torch): edits in the user's names, diffs that the
standard `patch` tool applies, and "Apply to file" with its NAME.py.orig and undo."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pt2_viewer.core.export.failures import SpecChange
from pt2_viewer.core.export.fixes import code_fixes, spec_fixes
from pt2_viewer.core.export.fixes.apply import PatchError, Written, apply_to_files, planned_backups, undo
from pt2_viewer.core.export.fixes.edits import Edit, EditConflict, apply_edits, unified_diff
from pt2_viewer.core.export.fixes.source import Script


def script(tmp_path: Path, text: str, name: str = "model.py") -> Script:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    parsed = Script.read(str(path))
    assert parsed is not None
    return parsed


def patched(tmp_path: Path, diff: str, name: str = "model.py") -> str:
    done = subprocess.run(["patch", "-p1", "--dry-run", "-d", str(tmp_path)], input=diff, text=True,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    out = subprocess.run(["patch", "-p1", "-o", "-", "-d", str(tmp_path), name], input=diff, text=True,
                         capture_output=True, check=True)
    return out.stdout.split("\n", 1)[1] if out.stdout.startswith("patching") else out.stdout


def test_edits_insert_in_order_and_refuse_overlaps():
    lines = ["a", "b", "c"]
    assert apply_edits(lines, [Edit("f", 2, 1, ["x"]), Edit("f", 2, 1, ["y"]), Edit("f", 3, 3, ["C"])]) == [
        "a", "x", "y", "b", "C"]
    with pytest.raises(EditConflict):
        apply_edits(lines, [Edit("f", 1, 2, ["z"]), Edit("f", 2, 3, ["w"])])


def test_torch_check_in_the_users_names_before_the_branch(tmp_path):
    s = script(tmp_path, "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x, y):\n"
                         "        a = x.item()\n        if a // 2 >= 5:\n            return y + 2\n"
                         "        return y * 5\n")
    found = code_fixes.data_dependent(s, 7, "((u0//2)) >= 5", "True", {"u0": "a"})
    [fix] = found.fixes
    assert fix.code == "torch._check(a // 2 >= 5)"
    assert fix.narrows == "the exported program will reject inputs where a // 2 < 5"
    assert "return torch.cond(a // 2 >= 5, lambda y: y + 2, lambda y: y * 5, (y,))" in found.reason
    assert "        torch._check(a // 2 >= 5)\n        if a // 2 >= 5:" in patched(tmp_path, unified_diff(
        fix.edits, str(tmp_path)))


def test_a_branch_on_tensor_data_becomes_torch_cond_then_a_named_check(tmp_path):
    s = script(tmp_path, "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, y):\n"
                         "        if y.sum() > 0:\n            return y * 2\n        else:\n            return y - 1\n")
    cond, check = code_fixes.data_dependent(s, 6, "Eq(u0, 1)", "True", {}).fixes
    assert cond.code == "return torch.cond(y.sum() > 0, lambda y: y * 2, lambda y: y - 1, (y,))" and not cond.narrows
    text = patched(tmp_path, unified_diff(check.edits, str(tmp_path)))
    assert ("        take_branch = (y.sum() > 0).item()\n        torch._check(take_branch)\n"
            "        if take_branch:") in text
    assert check.narrows == "the exported program will reject inputs where y.sum() > 0 is False"


def test_unknown_symbols_are_said_not_pasted(tmp_path):
    s = script(tmp_path, "def f(x):\n    return g(x) + 1\n")
    found = code_fixes.data_dependent(s, 2, "u7 > 3", "True", {})
    assert not found.fixes and "a value read from tensor data that no variable of the script holds" in found.reason
    assert "u7" not in found.reason  # said in the user's words, never torch's symbol (issue 30 §2)


def test_strict_false_is_set_on_the_users_call(tmp_path):
    s = script(tmp_path, "ep = torch.export.export(\n    M(), (x,),\n    strict=True,\n)\nep2 = export(M(), (x,))\n")
    [fix] = code_fixes.strict_false(s, 1).fixes
    assert fix.edits[0].new == ["    strict=False,"]
    [fix] = code_fixes.strict_false(s, 5).fixes
    assert fix.edits[0].new == ["ep2 = export(M(), (x,), strict=False)"]
    s = script(tmp_path, "ep = export(\n    M(),\n    (x,)\n)\n", "multi.py")
    [fix] = code_fixes.strict_false(s, 1).fixes
    assert patched(tmp_path, unified_diff(fix.edits, str(tmp_path)), "multi.py") == (
        "ep = export(\n    M(),\n    (x,),\n    strict=False,\n)\n")


def test_data_write_and_fake_kernel_stub(tmp_path):
    s = script(tmp_path, "class Bad2(torch.nn.Module):\n    def forward(self, x):\n        x.data[0, 0] = 3\n"
                         "        return x\n\n\nexport(Bad2(), (torch.randn(3, 3),))\n")
    [fix] = code_fixes.data_write(s, 7, "Bad2").fixes
    assert fix.edits[0].new == ["        x[0, 0] = 3"]
    (tmp_path / "ops.py").write_text('import torch\n\n\n@torch.library.custom_op("me::twice", mutates_args=())\n'
                                     "def twice(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n")
    [fix] = code_fixes.fake_kernel(str(tmp_path / "model.py"), "me.twice.default").fixes
    assert fix.edits[0].file == str(tmp_path / "ops.py")  # beside the op's definition, in the user's other file
    diff = unified_diff(fix.edits, str(tmp_path))
    assert diff.startswith("--- a/ops.py\n+++ b/ops.py\n")
    assert "@twice.register_fake\ndef _(x):\n    return torch.empty_like(x)" in patched(tmp_path, diff, "ops.py")


def test_spec_fixes_follow_the_users_dims_and_literal(tmp_path):
    s = script(tmp_path, 'dx, dy, d1 = torch.export.dims("dx", "dy", "d1")\nbatch = Dim("batch")\n'
                         'shapes = {"x": (dx, d1), "y": (dy, d1)}\nshapes["w"] = (Dim.AUTO, Dim.DYNAMIC)\n'
                         "export(M(), (x, y, w), dynamic_shapes=shapes)\n")
    [fix] = spec_fixes.spec_fix(s, 5, ["d1 = 4", "dy = dx", "batch = 4"], [
        SpecChange("make_static", input="w", axis=1, value=5)], ["x", "y", "w"]).fixes
    text = patched(tmp_path, unified_diff(fix.edits, str(tmp_path)))
    assert text.splitlines()[:5] == ['dx, dy, d1 = torch.export.dims("dx", "dy", "d1")', "d1 = 4", "dy = dx",
                                     "batch = 4", 'shapes = {"x": (dx, d1), "y": (dy, d1)}']
    assert 'shapes["w"] = (Dim.AUTO, Dim.STATIC)' in text
    assert "accepts only w.shape[1] == 5" in fix.narrows
    built = script(tmp_path, 'shapes = {n: {0: Dim(f"b_{n}")} for n in "ab"}\nexport(M(), (a, b), '
                             "dynamic_shapes=shapes)\n", "built.py")
    found = spec_fixes.spec_fix(built, 2, ["b_b = b_a"], [], ["a", "b"])
    assert not found.fixes and "no patch can follow" in found.reason and "b_b = b_a" in found.reason


def test_apply_to_file_keeps_the_original_and_undo_restores_it(tmp_path):
    s = script(tmp_path, "a = 1\nb = 2\n")
    diff = unified_diff([Edit(s.path, 2, 2, ["b = 3"])], str(tmp_path))
    [written] = apply_to_files(diff, tmp_path)
    changed = written.path
    assert changed.read_text() == "a = 1\nb = 3\n" and (tmp_path / "model.py.orig").read_text() == "a = 1\nb = 2\n"
    with pytest.raises(PatchError, match="the file changed since Diagnose ran"):
        apply_to_files(diff, tmp_path)  # already applied: its context no longer matches
    undo([written])
    assert changed.read_text() == "a = 1\nb = 2\n" and not (tmp_path / "model.py.orig").exists()


def test_two_fixes_of_one_call_apply_one_after_the_other(tmp_path):
    """Each problem's diff is made against the file as Diagnose saw it; once the first is applied (a line added above),
    the second's lines have moved and are found where they went, as `patch` finds them."""
    s = script(tmp_path, "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = 8\n")
    first = unified_diff([Edit(s.path, 2, 1, ["check_a = True"])], str(tmp_path))  # an insertion before line 2
    second = unified_diff([Edit(s.path, 7, 7, ["g = 70"])], str(tmp_path))
    apply_to_files(first, tmp_path)
    apply_to_files(second, tmp_path)
    assert Path(s.path).read_text().splitlines() == ["a = 1", "check_a = True", "b = 2", "c = 3", "d = 4", "e = 5",
                                                     "f = 6", "g = 70", "h = 8"]


def test_apply_to_file_keeps_line_endings_and_never_overwrites_a_file_of_the_users(tmp_path):
    s = script(tmp_path, "a = 1\nb = 2\n")
    diff = unified_diff([Edit(s.path, 2, 2, ["b = 3"])], str(tmp_path))
    Path(s.path).write_bytes(b"a = 1\r\nb = 2\r\n")  # the same lines, saved on Windows
    (tmp_path / "model.py.orig").write_text("the user's own backup\n")
    planned = planned_backups(diff, tmp_path)  # what the confirmation names, before anything is written
    assert planned == [Written(tmp_path / "model.py", tmp_path / "model.py.orig2")]
    [written] = apply_to_files(diff, tmp_path)
    assert [written] == planned
    assert Path(s.path).read_bytes() == b"a = 1\r\nb = 3\r\n"
    assert (tmp_path / "model.py.orig").read_text() == "the user's own backup\n"
    assert written.original == tmp_path / "model.py.orig2" and written.original.read_bytes() == b"a = 1\r\nb = 2\r\n"
    undo([written])
    assert Path(s.path).read_bytes() == b"a = 1\r\nb = 2\r\n"
    assert (tmp_path / "model.py.orig").read_text() == "the user's own backup\n"
    Path(s.path).write_bytes(b"a = 1\nb = \xff\n")
    with pytest.raises(PatchError, match="no longer UTF-8"):
        apply_to_files(diff, tmp_path)


def test_a_failed_scripts_report_says_why_its_graph_is_empty(tmp_path):
    import json

    from pt2_viewer.core.report.page import render_page
    from pt2_viewer.core.report.script_report import script_page

    line = {"file": "gate.py", "line": 7, "function": "forward", "code": "if y.sum() > 0:"}
    problem = {"kind": "data_dependent_error", "count": 1, "message": "could not decide", "user_line": line,
               "fix_kind": "torch_cond", "diff": "--- a/gate.py\n+++ b/gate.py\n", "verified": True,
               "reason": "", "narrows": ""}
    call = {"index": 0, "model": "Gate", "ok": False, "strict": False, "line": None,
            "failure": {"kind": "data_dependent_guard", "message": "Could not guard", "user_line": line},
            "problems": {"method": "draft_export", "items": [problem]}}
    (tmp_path / "report.json").write_text(json.dumps({"script": "gate.py", "ok": False, "calls": [call]}))
    page = script_page(tmp_path)
    assert page.empty_note == ("No program: the export of #0 Gate failed at line 7 (if y.sum() > 0:). The Export "
                               "calls tab says why and what to change.")
    text = render_page(page)
    assert '<p id="empty-note"' in text and "verified fix (torch_cond)" in text


def _call(tmp_path: Path):  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from pt2_viewer.core.export.doctor import Diagnosis, Problem
    from pt2_viewer.core.export.failures import SourceLine

    s = script(tmp_path, "import torch\n\n\nclass Gate(torch.nn.Module):\n    def forward(self, y):\n"
                         "        if y.sum() > 0:\n            return y * 2\n        return y - 1\n")
    problem = Problem("data_dependent_error", 1, "could not decide", SourceLine(s.path, 6, "forward",
                                                                               "if y.sum() > 0:"), "Eq(u0, 1)")
    call = SimpleNamespace(index=0, model="Gate", problems=Diagnosis("draft_export", [problem]))
    return s, call, code_fixes.data_dependent(s, 6, "Eq(u0, 1)", "True", {})


def test_a_fix_that_still_fails_is_tried_and_the_next_one_verified(tmp_path, monkeypatch):
    from pt2_viewer.core.export.fixes import verify

    s, call, candidates = _call(tmp_path)
    runs: list[list[str]] = []

    def rerun(script, fixes, out, timeout):  # the torch.cond rewrite fails, the named torch._check exports
        runs.append([f.kind for f in fixes])
        if fixes[0].kind == "torch_cond":
            return {0: verify.Outcome(False, "Export failed: cond branches differ", "if y.sum() > 0:", "Gate"),
                    -1: verify.Outcome(False, "")}
        return {0: verify.Outcome(True, model="Gate"), -1: verify.Outcome(False, "")}

    monkeypatch.setattr(verify, "_rerun", rerun)
    verify.verify(Path(s.path), [call], {0: {0: candidates}}, tmp_path / "v", 120)
    [p] = call.problems.items
    assert runs == [["torch_cond"], ["torch_check"]]
    assert p.verified and p.fix_kind == "torch_check" and "+        torch._check(take_branch)" in p.diff
    [tried] = p.tried
    assert tried["verified"] is False and tried["fix_kind"] == "torch_cond" and tried["problem_gone"] is False
    assert tried["failure"] == "Export failed: cond branches differ" and "--- a/model.py" in tried["diff"]


def test_verification_says_when_its_time_ran_out(tmp_path, monkeypatch):
    from pt2_viewer.core.export.fixes import verify

    s, call, candidates = _call(tmp_path)
    monkeypatch.setattr(verify, "_rerun", lambda *a: pytest.fail("no time was left to run"))
    verify.verify(Path(s.path), [call], {0: {0: candidates}}, tmp_path / "v", 0)
    [p] = call.problems.items
    assert not p.diff and not p.verified and "ran out of its time budget" in call.problems.note
