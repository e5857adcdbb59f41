"""The export doctor (`"diagnose": true`, `pt2-viewer export --diagnose`) on the seed tutorial's data-dependent
examples, run in a real worker with torch 2.13: every problem of a call in one pass, at the user's line, with the
`torch._check` fix as a diff that, applied, makes the export succeed; a draft program saved when export failed; and
the fallback, said in words, where torch's draft export fails itself."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from pt2_viewer.core.export.doctor import DRAFT, STRICT, check_line
from pt2_viewer.core.export.report import read_report
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import run_job
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import SEED_TUTORIAL

ENV = {"OMP_NUM_THREADS": "1"}


def tutorial_class(marker: str) -> str:
    """The source of the tutorial's `class Foo` whose forward contains `marker` and no torch._check yet."""
    source = SEED_TUTORIAL.read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            text = ast.get_source_segment(source, node) or ""
            if marker in text and "torch._check" not in text:
                return text
    raise AssertionError(f"the seed tutorial has no Foo with {marker!r}")


def script_text() -> str:
    branch = tutorial_class("if a // 2 >= 5:")
    index = tutorial_class("return y[a]").replace("class Foo", "class Index")
    return (f"import torch\nfrom torch.export import export\n\n\n{branch}\n\n\n{index}\n\n\n"
            "for strict in (False, True):\n"
            "    try:\n"
            "        export(Foo(), (torch.tensor(32), torch.randn(4)), strict=strict)\n"
            "    except Exception:\n"
            "        pass\n"
            "export(Index(), (torch.tensor(32), torch.randn(60)), strict=False)\n")


def export(script: Path, out: Path, **request) -> dict:
    _, outcome = run_job("export_script", {"script": str(script), **request}, out, env=ENV, timeout_s=300)
    assert outcome.status == protocol.OK, outcome.message + (outcome.error_traceback or "")
    return json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doctor")
    script = folder / "data_dependent.py"
    script.write_text(script_text(), encoding="utf-8")
    return script, export(script, folder / "out", diagnose=True), folder / "out"


def test_data_dependent_branch_gets_a_torch_check_at_the_users_line(diagnosed):
    script, report, out = diagnosed
    lines = script.read_text().splitlines()
    branch_line = lines.index("        if a // 2 >= 5:") + 1
    for call in report["calls"][:2]:  # non-strict, then strict: both fail, both diagnosed by draft export
        assert not call["ok"] and call["failure"]["kind"] == "data_dependent_guard"
        problems = call["problems"]
        assert problems["method"] == DRAFT
        [problem] = problems["items"]
        assert problem["kind"] == "data_dependent_error" and problem["count"] == 1
        assert problem["user_line"]["line"] == branch_line
        assert problem["fix_kind"] == "torch_check" and problem["fix"] == "torch._check(a // 2 >= 5)"
        assert "+        torch._check(a // 2 >= 5)\n         if a // 2 >= 5:" in problem["diff"]
        # the program draft export produced anyway, readable without torch
        assert read_archive(out / problems["pt2"]).programs[0].node_count > 0


def test_fallback_is_said_when_draft_export_fails(diagnosed):
    call = diagnosed[1]["calls"][2]  # y[a]: torch 2.13's draft export fails where export succeeds
    assert call["ok"] and call["problems"]["method"] == STRICT
    assert "torch's draft export could not diagnose this call" in call["problems"]["note"]
    assert call["problems"]["items"] == []


def test_report_reads_problems_back_and_the_cli_lists_them(diagnosed, capsys):
    from pt2_viewer.core.cli.export import format_summary

    script, report, out = diagnosed
    back = read_report(out / "report.json")
    assert back.calls[0].problems is not None and back.calls[0].problems.items[0].fix.startswith("torch._check(")
    text = format_summary(report, out)
    assert "Diagnose #0 (draft_export): 1 problem(s)" in text and "fix (torch_check): torch._check(a // 2 >= 5)" in text


def test_applying_the_fix_makes_the_export_succeed(diagnosed, tmp_path):
    script, report, _ = diagnosed
    problem = report["calls"][0]["problems"]["items"][0]
    lines = script.read_text().splitlines(keepends=True)
    at = problem["user_line"]["line"] - 1
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    fixed = tmp_path / "fixed.py"
    fixed.write_text("".join([*lines[:at], indent + problem["fix"] + "\n", *lines[at:]]), encoding="utf-8")
    again = export(fixed, tmp_path / "out")
    assert [c["ok"] for c in again["calls"]] == [True, True, True]


def test_check_line_names_and_negation():
    assert check_line("((u0//2)) >= 5", True, {"u0": "a"}) == "torch._check(a // 2 >= 5)"
    assert check_line("u0 >= 10", False, {"u0": "a"}) == "torch._check(a < 10)"
    assert check_line("Eq(u0, 4)", False, {}) == "torch._check(u0 != 4)"
    assert check_line("Max(u0, 2) > u1", False, {}) == "torch._check(Max(u0, 2) <= u1)"
