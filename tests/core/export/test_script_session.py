"""ScriptSession on real worker runs: events fill the entries in call order, report.json completes them, crashes and
cancels keep what was seen and say what happened; the dynamic_shapes rows round-trip real specs and the suggested
fix of a real constraint violation is shown as a change to the spec. No Qt."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pt2_viewer.core.export.failures import CONSTRAINT_VIOLATION, DATA_DEPENDENT_GUARD, GRAPH_BREAK, SPECIALIZED_VALUE
from pt2_viewer.core.export.script_session import (
    AUTO,
    DONE,
    FAILED,
    NAMED,
    OK,
    STATIC,
    UNFINISHED,
    DimRow,
    Rerun,
    ScriptSession,
    input_ranks,
    rows_to_spec,
    spec_change_lines,
    spec_lines,
    spec_to_rows,
)
from pt2_viewer.core.jobs.client import WorkerJob
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.pt2.reader import read_archive

SCRIPTS = Path(__file__).parents[2] / "scripts"
ENV = {"OMP_NUM_THREADS": "1"}


def run(script: Path, out: Path, rerun: Rerun | None = None, **kw) -> tuple[ScriptSession, list[int]]:
    """Run the script in a real worker, feeding the session as the GUI does; returns it and the entry count seen
    after each export_started event."""
    session = ScriptSession(script)
    session.begin(out, rerun)
    seen: list[int] = []

    def on_event(event: dict) -> None:
        session.apply_event(event)
        if event["type"] == "export_started":
            seen.append(len(session.entries))

    job = WorkerJob(JobSpec("export_script", session.request(rerun), out, env=ENV, on_event=on_event,
                            on_output=session.add_output, **kw))
    job.start()
    outcome = job.wait()
    session.finish(outcome.status, outcome.message)
    return session, seen


@pytest.fixture(scope="module")
def several(tmp_path_factory) -> tuple[ScriptSession, list[int]]:
    return run(SCRIPTS / "several_exports.py", tmp_path_factory.mktemp("several"), timeout_s=300)


@pytest.fixture(scope="module")
def convention(tmp_path_factory) -> ScriptSession:
    return run(SCRIPTS / "convention.py", tmp_path_factory.mktemp("convention"), timeout_s=300)[0]


def test_events_and_report_give_every_call_in_order(several) -> None:
    session, seen = several
    assert seen == list(range(1, 10))  # one entry per export_started, as the calls happened
    assert [e.model for e in session.entries] == ["Small", "DataBranch", "ItemBranch", "IntCast", "Broadcast",
                                                  "Shapes", "Cond", "MapModule", "UsesGlobals"]
    assert [e.status for e in session.entries] == [OK, FAILED, FAILED, FAILED, FAILED, OK, OK, OK, OK]
    assert session.state == DONE and not session.running
    assert session.outcome_message == "9 export calls: 5 exported, 4 failed."
    small = session.entries[0]
    assert small.line is not None and small.line.code.startswith("ep = export(Small()")
    assert small.pt2 is not None and small.pt2.parent == session.out_dir
    assert read_archive(str(small.pt2)).programs[0].graph.nodes  # the saved program reads back
    assert session.first_success() is small
    assert "exported Small 8" in [line.text for line in session.log if line.stream == "stdout"]


def test_failures_carry_kind_user_line_and_traceback(several) -> None:
    session, _ = several
    kinds = {e.model: e.kind for e in session.entries if e.status == FAILED}
    assert kinds == {"DataBranch": GRAPH_BREAK, "ItemBranch": DATA_DEPENDENT_GUARD, "IntCast": SPECIALIZED_VALUE,
                     "Broadcast": CONSTRAINT_VIOLATION}
    broadcast = next(e for e in session.entries if e.model == "Broadcast")
    assert broadcast.failure is not None and broadcast.failure.user_line is not None
    assert broadcast.failure.user_line.code == "w = x + y"
    assert "Traceback" in broadcast.failure.traceback
    assert broadcast.summary == ("constraint violation: Export requires x.shape[1] == 4 and y.shape[1] == 4 and "
                                 "x.shape[0] == y.shape[0].")
    assert broadcast.call_id == 4
    for entry in session.entries:  # the Exports list, its tooltips and the status bar say no torch-internal symbol
        assert not re.search(r"\b[su]\d+\b|L\[|Eq\(|unhinted|TORCH_LOGS", entry.summary + entry.headline), entry.summary


def test_guards_are_read_back_with_input_dims_and_user_lines(several) -> None:
    session, _ = several
    shapes = next(e for e in session.entries if e.model == "Shapes")
    assert {(s.input, s.axis) for s in shapes.guards.symbols} == {("x", 0), ("y", 0), ("y", 1)}
    guard = shapes.guards.guards[0]
    assert guard.readable == "Eq(x.shape[0], y.shape[1])"
    assert guard.user_line is not None and guard.user_line.code == "x0 = x + y"
    assert input_ranks(shapes) == {"x": 1, "y": 2}


def test_a_constraint_violation_fix_is_a_change_to_the_spec(convention) -> None:
    entry = convention.entries[0]
    assert entry.source == "convention" and entry.call_id == "convention" and entry.kind == CONSTRAINT_VIOLATION
    fixed = convention.fixed_spec(entry)
    assert fixed == {"dims": {"dx": {}}, "inputs": {"x": [{"dim": "dx"}, "static"], "y": [{"dim": "dx"}, "static"]}}
    assert spec_change_lines(entry.spec, fixed) == [
        "- dy = Dim('dy')", "- y: (dy, Dim.STATIC)", "+ y: (dx, Dim.STATIC)", "  dx = Dim('dx')",
        "  x: (dx, Dim.STATIC)"]


def test_the_fixed_spec_exports_in_a_rerun(convention, tmp_path: Path) -> None:
    entry = convention.entries[0]
    fixed = convention.fixed_spec(entry)
    rerun = Rerun(entry.call_id, strict=False, dynamic_shapes=fixed)
    session, _ = run(SCRIPTS / "convention.py", tmp_path, rerun, timeout_s=300)
    again = session.rerun_entry()
    assert again is not None and again.ok and again.pt2 is not None
    assert again.spec == fixed
    assert session.request(rerun).to_json()["rerun"] == {"call": "convention", "strict": False, "dynamic_shapes": fixed}


def test_a_crash_keeps_the_log_and_says_what_happened(tmp_path: Path) -> None:
    session, _ = run(SCRIPTS / "segfault.py", tmp_path, timeout_s=120)
    assert session.outcome_status == "crashed"
    assert "segmentation fault" in session.outcome_message
    assert "about to crash" in [line.text for line in session.log]
    assert session.entries == [] and session.first_success() is None


def test_an_unfinished_call_is_marked_when_the_worker_stops(tmp_path: Path) -> None:
    session = ScriptSession(SCRIPTS / "several_exports.py")
    session.begin(tmp_path)
    session.apply_event({"type": "started", "job": "export_script", "pid": 1})
    session.apply_event({"type": "export_started", "index": 0, "model": "Small", "line": 15, "source": "script"})
    assert session.entries[0].summary == "exporting…" and session.running
    session.finish("cancelled", "Cancelled: the worker and everything it started were stopped.")
    assert session.entries[0].status == UNFINISHED
    assert session.outcome_message.startswith("Cancelled:")
    assert "1 export call seen before it stopped is listed" in session.outcome_message


def test_rows_round_trip_real_specs(several, convention) -> None:
    session, _ = several
    specs = [e.spec for e in session.entries + convention.entries if e.spec and e.spec["inputs"]]
    assert len(specs) >= 3
    for entry in session.entries + convention.entries:
        if entry.spec and entry.spec["inputs"]:
            rows = spec_to_rows(entry.spec, input_ranks(entry))
            assert rows_to_spec(rows)["inputs"] == entry.spec["inputs"]


def test_rows_make_named_dims_with_shared_ranges() -> None:
    rows = [DimRow("x", 0, NAMED, "batch", 2, 64), DimRow("x", 1), DimRow("y", 0, NAMED, "batch"),
            DimRow("y", 1, AUTO, min=1, max=8), DimRow("z", 0, STATIC)]
    spec = rows_to_spec(rows)
    assert spec == {"dims": {"batch": {"min": 2, "max": 64}},
                    "inputs": {"x": [{"dim": "batch"}, "static"], "y": [{"dim": "batch"}, {"hint": "auto", "min": 1,
                                                                                            "max": 8}],
                               "z": None}}
    assert spec_lines(spec) == ["batch = Dim('batch', min=2, max=64)", "x: (batch, Dim.STATIC)",
                                "y: (batch, Dim.AUTO(min=1, max=8))", "z: None"]
    with pytest.raises(ValueError, match="identifier"):
        rows_to_spec([DimRow("x", 0, NAMED, "2bad")])
