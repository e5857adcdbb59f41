"""The export_script job end to end: real scripts run in a real worker with torch 2.13, their report.json, the
`.pt2` files read back by pt2_viewer.core.pt2.reader, re-exports with other options, and `pt2-viewer export`.

Each script is run once per session (module-scoped fixtures); the tests then read what it produced.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.export.failures import (
    CONSTRAINT_VIOLATION,
    DATA_DEPENDENT_GUARD,
    GRAPH_BREAK,
    OTHER,
    SPECIALIZED_VALUE,
    UNTRACEABLE_DATA,
    apply_changes,
    failure_from_json,
)
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import run_job
from pt2_viewer.core.pt2.reader import read_archive
from tests.core.export.test_failures import line_in
from tests.programs import SEED_TUTORIAL

SCRIPTS = Path(__file__).parents[2] / "scripts"
SEVERAL = SCRIPTS / "several_exports.py"
TUTORIAL = SEED_TUTORIAL
ENV = {"OMP_NUM_THREADS": "1"}


def export(script: Path, out: Path, **request) -> tuple:
    job, outcome = run_job("export_script", {"script": str(script), **request}, out, env=ENV, timeout_s=300)
    assert outcome.status == protocol.OK, outcome.message + (outcome.error_traceback or "")
    return job, json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def several(tmp_path_factory):
    out = tmp_path_factory.mktemp("several")
    job, report = export(SEVERAL, out)
    return job, report, out


@pytest.fixture(scope="module")
def convention(tmp_path_factory):
    out = tmp_path_factory.mktemp("convention")
    return export(SCRIPTS / "convention.py", out)[1]


def test_every_export_call_is_recorded_in_order_with_its_line(several):
    job, report, _ = several
    calls = report["calls"]
    assert [c["model"] for c in calls] == ["Small", "DataBranch", "ItemBranch", "IntCast", "Broadcast", "Shapes",
                                          "Cond", "MapModule", "UsesGlobals"]
    assert [c["index"] for c in calls] == list(range(9))
    assert calls[0]["line"]["line"] == line_in(str(SEVERAL), "ep = export(Small()")
    assert calls[8]["line"]["code"] == "export(UsesGlobals(), (torch.randn(3),), strict=True)"
    assert [c["ok"] for c in calls] == [True, False, False, False, False, True, True, True, True]
    assert [c["strict"] for c in calls][:4] == [False, True, True, False]
    assert report["ok"] is True and report["script_error"] is None
    assert report["torch_version"].startswith("2.13")
    # the script caught each failure and went on to its end
    assert job.stdout_lines.count("caught UserError") == 2 and "all done" in job.stdout_lines
    finished = [e for e in job.events if e["type"] == "export_finished"]
    assert [e["ok"] for e in finished] == [c["ok"] for c in calls]


def test_failures_are_classified_and_point_at_the_users_line(several):
    _, report, _ = several
    failures = {c["model"]: failure_from_json(c["failure"]) for c in report["calls"] if not c["ok"]}
    expect = {"DataBranch": (GRAPH_BREAK, "# graph break in strict mode"),
              "ItemBranch": (DATA_DEPENDENT_GUARD, "# data-dependent guard"),
              "IntCast": (SPECIALIZED_VALUE, "# specialized value"),
              "Broadcast": (CONSTRAINT_VIOLATION, "w = x + y")}
    for model, (kind, marker) in expect.items():
        failure = failures[model]
        assert failure.kind == kind, model
        assert failure.user_line.file == str(SEVERAL)
        assert failure.user_line.line == line_in(str(SEVERAL), marker), model
        assert failure.hint and failure.message and "Traceback" in failure.traceback
    assert failures["Broadcast"].suggested_fixes_text == ["d1 = 4", "dy = dx"]
    assert [f.action for f in failures["Broadcast"].fixes] == ["make_static", "relate"]


def test_strict_export_of_a_class_using_script_globals_works(several):
    """torch looks the script's module up by name in strict mode; the job registers it as __main__."""
    _, report, _ = several
    call = report["calls"][8]
    assert call["strict"] and call["ok"], call["failure"]


def test_guards_and_symbols_per_call(several):
    _, report, _ = several
    shapes = report["calls"][5]
    symbols = {(s["input"], s["axis"]): s for s in shapes["guards"]["symbols"]}
    assert set(symbols) == {("x", 0), ("y", 0), ("y", 1)}
    assert symbols[("y", 0)]["hint"] == "8"
    [guard] = shapes["guards"]["guards"]
    assert guard["readable"] == "Eq(x.shape[0], y.shape[1])"
    assert guard["user_line"]["line"] == line_in(str(SEVERAL), "x0 = x + y")
    assert shapes["dynamic_shapes_spec"] == {"dims": {}, "inputs": {"x": ["auto"], "y": ["auto", "auto"]}}
    assert shapes["program"]["range_constraints"]  # dynamic: symbols survive in the program
    assert report["calls"][0]["guards"] == {"symbols": [], "guards": [], "raw": []}


def test_programs_are_saved_as_pt2_that_the_reader_opens(several):
    _, report, out = several
    saved = {c["model"]: c["pt2"] for c in report["calls"] if c["ok"]}
    assert saved["Small"] == "00_Small.pt2" and not any(p.name.startswith(".") for p in out.iterdir())
    targets = {}
    for model, name in saved.items():
        program = read_archive(out / name).program()
        targets[model] = [n.target for n in program.graph.nodes]
    assert "torch.ops.higher_order.cond" in targets["Cond"]
    assert "torch.ops.higher_order.map_impl" in targets["MapModule"]
    assert "torch.ops.aten.linear.default" in targets["Small"]
    assert read_archive(out / saved["Shapes"]).program().range_constraints


def test_convention_exports_model_and_reports_its_constraint_violation(convention):
    [call] = convention["calls"]
    assert call["source"] == "convention" and call["strict"] is False
    assert call["line"]["code"] == "model = TwoInputs()"
    assert call["inputs"] == ["x", "y"]
    assert call["dynamic_shapes_spec"] == {"dims": {"dx": {}, "dy": {}},
                                           "inputs": {"x": [{"dim": "dx"}, "static"], "y": [{"dim": "dy"}, "static"]}}
    failure = failure_from_json(call["failure"])
    assert failure.kind == CONSTRAINT_VIOLATION and failure.suggested_fixes_text == ["dy = dx"]
    assert failure.user_line.code == "return self.lin(x + y)"


def test_rerun_with_the_suggested_fix_and_strict_mode_succeeds(convention, tmp_path):
    [call] = convention["calls"]
    fixed = apply_changes(call["dynamic_shapes_spec"], failure_from_json(call["failure"]).fixes)
    _, report = export(SCRIPTS / "convention.py", tmp_path,
                       rerun={"call": 0, "strict": True, "dynamic_shapes": fixed})
    [again] = report["calls"]
    assert again["ok"] and again["rerun"] and again["strict"] is True
    assert again["dynamic_shapes_spec"] == fixed
    assert len(read_archive(tmp_path / again["pt2"]).program().range_constraints) == 1  # just dx


def test_custom_op_with_auto_dynamic_batch(tmp_path):
    _, report = export(SCRIPTS / "custom_op.py", tmp_path)
    [call] = report["calls"]
    assert call["ok"] and call["dynamic_shapes_spec"] == {"dims": {}, "inputs": {"x": ["auto", "static"]}}
    program = read_archive(tmp_path / call["pt2"]).program()
    assert "torch.ops.pt2v_test.scaled_relu.default" in [n.target for n in program.graph.nodes]
    assert [(s["input"], s["axis"]) for s in call["guards"]["symbols"]] == [("x", 0)]


def test_bad_rerun_spec_fails_that_call_with_a_clear_message(tmp_path):
    _, report = export(SCRIPTS / "convention.py", tmp_path,
                       rerun={"call": "convention", "dynamic_shapes": {"inputs": {"z": ["auto"]}}})
    failure = report["calls"][0]["failure"]
    assert failure["kind"] == OTHER
    assert "names inputs the model does not take: z (its inputs are: x, y)" in failure["message"]


# --- pt2-viewer export ---------------------------------------------------------------------------------------------

def test_cli_reports_a_script_that_does_not_compile_and_exits_non_zero(tmp_path, capsys):
    code = cli_main(["export", str(SCRIPTS / "syntax_error.py"), "-o", str(tmp_path), "-q"])
    out = capsys.readouterr().out
    assert code == 1
    assert "The script stopped at line 3 (def broken(:): SyntaxError" in out
    assert json.loads((tmp_path / "report.json").read_text())["calls"] == []


def test_cli_says_when_the_worker_itself_died(tmp_path, capsys):
    code = cli_main(["export", str(SCRIPTS / "os_exit.py"), "-o", str(tmp_path), "-q"])
    assert code == 2
    assert "exited with code 3 before the job finished" in capsys.readouterr().err


def test_cli_rejects_options_that_make_no_sense(tmp_path):
    with pytest.raises(SystemExit, match="need --rerun"):
        cli_main(["export", str(SCRIPTS / "convention.py"), "-o", str(tmp_path), "--strict"])
    with pytest.raises(SystemExit, match="not valid JSON"):
        cli_main(["export", str(SCRIPTS / "convention.py"), "-o", str(tmp_path), "--rerun", "0",
                  "--dynamic-shapes", "{oops"])
    with pytest.raises(SystemExit, match="does not exist"):
        cli_main(["export", str(tmp_path / "nope.py"), "-o", str(tmp_path)])


@pytest.mark.skipif(not TUTORIAL.is_file(), reason="the seed tutorial is not on this machine")
def test_seed_tutorial_runs_as_one_script_and_stops_at_export_for_training(tmp_path, capsys):
    code = cli_main(["export", str(TUTORIAL), "-o", str(tmp_path), "-q"])
    summary = capsys.readouterr().out
    assert code == 1  # the script itself stopped
    report = json.loads((tmp_path / "report.json").read_text())
    calls = report["calls"]
    assert len(calls) == 22
    kinds = [c["failure"]["kind"] if c["failure"] else "ok" for c in calls]
    assert kinds.count("ok") == 16
    assert {DATA_DEPENDENT_GUARD, CONSTRAINT_VIOLATION, SPECIALIZED_VALUE} <= set(kinds)
    bad2 = next(c for c in calls if c["model"] == "Bad2")  # `x.data[0, 0] = 3`, non-strict by default in 2.13
    assert bad2["failure"]["kind"] == UNTRACEABLE_DATA and ".data" in bad2["failure"]["hint"]
    assert "other" not in kinds, "every failure of the tutorial gets an explanation"
    lines = [c["line"]["line"] for c in calls]
    assert lines == sorted(lines) and lines[0] == line_in(str(TUTORIAL), "exported_mod = export(mod,")
    assert calls[-1]["model"] == "CustomOpExample" and calls[-1]["ok"]
    violation = next(c for c in calls if c["failure"] and c["failure"]["suggested_fixes_text"])
    assert violation["failure"]["suggested_fixes_text"] == ["d1 = 4", "dy = dx"]
    error = report["script_error"]
    assert error["type"] == "AttributeError" and "export_for_training" in error["message"]
    assert error["line"]["line"] == line_in(str(TUTORIAL), "ep_for_training = torch.export.export_for_training")
    assert "export_for_training" in summary.splitlines()[-3]
    for call in calls:
        if call["pt2"]:
            assert read_archive(tmp_path / call["pt2"]).program().graph.nodes


def test_report_reads_back_into_the_same_objects_without_torch(several):
    from pt2_viewer.core.export.report import read_report

    _, raw, out = several
    report = read_report(out / "report.json")
    assert report.ok and len(report.calls) == 9 and report.script == str(SEVERAL)
    assert [c.to_json() for c in report.calls] == raw["calls"]
    broadcast = report.calls[4]
    assert broadcast.failure.kind == CONSTRAINT_VIOLATION and broadcast.guards.guards[0].user_line.file == str(SEVERAL)
    with pytest.raises(ValueError, match="not a PT2 Viewer export report"):
        read_report(out / "result.json")
