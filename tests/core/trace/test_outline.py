"""What the window's trace view says (core/trace/outline.py), on traces real torch wrote (tests/trace_programs.py):
compiles grouped by frame per rank, graphs told apart, the compile a recompile replaced, the fix for a failed guard
naming the tensor, cache hits and provenance in words."""
from __future__ import annotations

import pytest

from pt2_viewer.core.trace import outline
from pt2_viewer.core.trace.reader import read_trace
from tests.trace_programs import compile_trace, ranks_trace, warm_trace


@pytest.fixture(scope="module")
def trace():
    return read_trace(compile_trace())


def _compile(trace, cid: str):  # type: ignore[no-untyped-def]
    return next(c for c in trace.compiles if str(c.id) == cid)


def test_frames_group_a_ranks_compiles_in_order(trace) -> None:  # type: ignore[no-untyped-def]
    frames = outline.frames(trace, None)
    assert [str(c.id) for f in frames for c in f.compiles] == [str(c.id) for c in trace.compiles]
    shapes = next(f for f in frames if f.title.startswith("frame 8: shapes (compile_script.py:"))
    assert [outline.title(c) for c in shapes.compiles] == ["[8/0]", "[8/1] recompile", "[8/2] recompile"]
    assert outline.title(_compile(trace, "[4/0_1]")) == "[4/0_1] restart"
    ranked = read_trace(ranks_trace())
    assert [[str(c.id) for c in f.compiles] for f in outline.frames(ranked, 1)] == [["[0/0]", "[0/1]"]]
    assert outline.headline(ranked, 0) == "1 compile in 1 frame, 0 graph breaks, 0 recompiles"


def test_a_training_compiles_graphs_are_told_apart(trace) -> None:  # type: ignore[no-untyped-def]
    graphs = outline.graphs(trace.compiles[0])  # the CNN's training step
    titles = [g.title for g in graphs]
    assert titles[:4] == ["Dynamo graph", "AOTAutograd joint", "AOTAutograd forward", "AOTAutograd backward"]
    backward = next(g for g in graphs if g.title == "Inductor post-grad graph (backward)")
    assert backward.index == 1 and not backward.is_code
    assert next(g for g in graphs if g.title == "Inductor output code (forward)").is_code


def test_a_recompile_names_what_it_replaced_and_the_fix_names_the_tensor(trace) -> None:  # type: ignore[no-untyped-def]
    assert outline.replaced(trace, _compile(trace, "[8/2]")) is _compile(trace, "[8/1]")
    assert outline.replaced(trace, _compile(trace, "[4/0_1]")) is None  # a restart replaces no compile
    fixes = {str(r.compile_id): outline.recompile_fix(r) for r in trace.recompiles}
    assert "torch._dynamo.mark_dynamic(y, 0)" in (fixes["[3/1]"] or "")  # the resumed frame's own tensor
    assert "dynamic=True" in (fixes["[8/1]"] or "") and "Dim" in (fixes["[8/1]"] or "")
    assert (fixes["[8/2]"] or "").startswith("call with the dtype it was compiled for")
    diff = outline.graph_diff(_compile(trace, "[8/1]"), _compile(trace, "[8/2]")) or ""
    assert any(line.startswith("+") and '"f64[' in line for line in diff.splitlines())


def test_details_say_time_by_phase_provenance_and_cache_hits(trace) -> None:  # type: ignore[no-untyped-def]
    detail = outline.detail(trace, _compile(trace, "[8/2]"))
    assert "Inductor: " in detail and "no provenance in this trace" in detail
    assert "`x.dtype` was float32 when compiled for [8/1], now float64" in detail
    assert "Graph break at compile_script.py:" in outline.detail(trace, _compile(trace, "[2/0]"))
    warm = read_trace(warm_trace())
    hit = next(c for c in warm.compiles if c.cache_hit)
    said = outline.cache_text(hit)
    assert "FX graph cache" in said and "that run's source lines" in said
    assert outline.provenance_note(hit) == outline.NO_PROVENANCE  # its mappings are empty: torch tracked none
