"""The trace reader on traces real torch wrote (tests/trace_programs.py): compiles per rank, graph breaks once each
at the user's own line with a fix, recompiles with the failed guard in words, graphs, cache hits, damage."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.reader import read_trace
from pt2_viewer.core.trace.summary import graphs_of, trace_json
from tests.trace_programs import (
    compile_trace,
    marked_line,
    ranks_trace,
    warm_trace,
)


@pytest.fixture(scope="module")
def trace():
    return read_trace(compile_trace())


@pytest.fixture(scope="module")
def script() -> Path:
    return compile_trace().parent / "compile_script.py"


def test_every_graph_break_once_at_the_users_line_with_its_fix(trace, script):
    by_line = {(b.file, b.line): b for b in trace.graph_breaks}
    assert len(by_line) == len(trace.graph_breaks)  # once each
    expected = {"branch": "torch.cond", "print": "reorderable_logging_functions", "item": "capture_scalar_outputs"}
    for marker, fix in expected.items():
        entry = by_line[(str(script), marked_line(script, marker))]
        assert fix in (entry.fix or ""), (marker, entry)
        assert entry.code and entry.code.startswith("gb"), entry
        assert entry.compile_ids and entry.reason
        assert not entry.said.startswith("Encountered graph break")  # torch's title and explanation, not where
    assert "`print`" in by_line[(str(script), marked_line(script, "print"))].said
    branch = by_line[(str(script), marked_line(script, "branch"))]
    assert len(branch.compile_ids) == 2  # the branch's recompile hit the same break: listed once, with both ids
    assert all(b.file == str(script) for b in trace.graph_breaks), [b.file for b in trace.graph_breaks]


def test_recompiles_say_the_failed_guard_in_words(trace, script):
    shapes_line = marked_line(script, "shapes")
    frames = {c.id.frame_id for c in trace.compiles if c.frame and c.frame.line == shapes_line}
    reasons = [r for rc in trace.recompiles if rc.compile_id.frame_id in frames for r in rc.reasons]
    assert any(r.startswith("`x.size(0)` was 2 when compiled for [") and r.endswith(", now 3") for r in reasons), \
        reasons
    assert any(r.startswith("`x.dtype` was float32 when compiled") and r.endswith("now float64") for r in reasons), \
        reasons
    assert all(rc.compile_id.frame_compile_id for rc in trace.recompiles)  # a recompile is never a frame's first


def test_compiles_name_the_users_frame_status_time_and_graphs(trace, script):
    assert trace.ranks == [None] and trace.damage is None
    for compile_ in trace.compiles:
        assert compile_.frame is not None and "/torch/" not in compile_.frame.file, compile_
        assert compile_.status in {"compiled", "graph break", "failed", "restarted"}
    compiled = [c for c in trace.compiles if c.status == "compiled"]
    assert compiled and all(c.seconds and c.seconds > 0 for c in compiled)
    assert all("dynamo" in graphs_of(c) and "inductor_code" in graphs_of(c) for c in compiled)
    backward = [c for c in trace.compiles if "aot_backward" in graphs_of(c)]
    assert backward and all("aot_forward" in graphs_of(c) for c in backward)  # the CNN's training step
    # the print restarts its frame's analysis: the first attempt is "restarted", the last a graph break
    printing = marked_line(script, "print")
    restarted = [c for c in trace.compiles if c.status == "restarted"]
    assert restarted and any(b.line == printing and str(c.id) in b.compile_ids
                             for c in restarted for b in trace.graph_breaks)
    assert not any(c.cache_hit for c in trace.compiles)  # a cold Inductor cache


def test_a_graph_reads_back_as_the_text_torch_logged(trace, script):
    graph = next(c for c in trace.compiles if "dynamo" in graphs_of(c)).artifact("dynamo_output_graph")
    assert graph is not None
    text = graph.text()
    assert text.startswith("class GraphModule(torch.nn.Module):") and f'# File: {script}' in text


def test_the_warm_run_marks_its_cache_hits():
    warm = read_trace(warm_trace())
    hits = [c for c in warm.compiles if c.cache_hit]
    assert hits and all("dynamo" in graphs_of(c) for c in hits)
    assert any(a.name in {"aotautograd_cache_hit", "fx_graph_cache_hit"} for c in hits for a in c.artifacts)


def test_ranks_are_read_from_every_log_and_differ_where_torch_did():
    ranked = read_trace(ranks_trace())
    assert len(ranked.logs) == 2 and ranked.ranks == [0, 1]
    assert [r.rank for r in ranked.recompiles] == [1]  # rank 1 called with a second shape, rank 0 did not
    assert "was 4 when compiled" in ranked.recompiles[0].reasons[0]
    out = trace_json(ranked)
    assert {c["rank"] for c in out["compiles"]} == {0, 1}  # type: ignore[index]
    single = trace_json(read_trace(compile_trace()))
    assert {c["rank"] for c in single["compiles"]} == {None}  # type: ignore[index]


def test_a_truncated_log_keeps_what_came_before(tmp_path):
    log = next(compile_trace().glob("*.log"))
    data = log.read_bytes()
    cut = tmp_path / log.name
    cut.write_bytes(data[: len(data) // 2])
    whole, half = read_trace(log), read_trace(cut)
    assert whole.damage is None
    assert half.damage and cut.name in half.damage
    assert 0 < len(half.compiles) < len(whole.compiles)
    assert [str(c.id) for c in half.compiles] == [str(c.id) for c in whole.compiles[: len(half.compiles)]]


def test_what_is_not_a_trace_is_one_line(tmp_path):
    not_trace = tmp_path / "notes.log"
    not_trace.write_text("hello\n", encoding="utf-8")
    for path in (not_trace, tmp_path / "missing", tmp_path):
        with pytest.raises(TraceError) as raised:
            read_trace(path)
        assert "\n" not in str(raised.value) and str(path) in str(raised.value)

