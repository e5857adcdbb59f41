"""Overlays (core/graph/overlays.py) on real programs: dtype, parameter bytes, a user's JSON, a run's heat."""
from __future__ import annotations

import json

import pytest

from pt2_viewer.core.graph.overlays import (
    OverlayFileError,
    dtype_overlay,
    json_overlay,
    parameter_bytes_overlay,
    run_time_overlay,
)
from pt2_viewer.core.pt2.reader import read_archive


def test_dtype_and_parameter_bytes(pt2_path) -> None:  # type: ignore[no-untyped-def]
    program = read_archive(pt2_path("attention_blocks")).program()
    dtypes = dtype_overlay(program.graph)
    assert dtypes.legend[0].label.startswith("float32 (") and not dtypes.is_scale
    assert dtypes.text("p_blocks_0_attn_in_proj_weight") == "float32"
    sizes = parameter_bytes_overlay(program, program.graph)
    assert sizes.is_scale
    assert sizes.text("p_blocks_0_attn_in_proj_weight") == "3.0 KB"  # f32[48, 16]
    assert sizes.text("p_blocks_0_attn_out_proj_bias") == "64 B"  # f32[16]
    assert sizes.levels["p_blocks_0_attn_in_proj_weight"] > sizes.levels["p_blocks_0_attn_out_proj_bias"]
    assert [i.label for i in sizes.legend] == ["64 B", "3.2 KB"]  # in_proj weight and bias read by one op
    assert not sizes.covers("x")


def test_user_json(pt2_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    graph = read_archive(pt2_path("dynamic_shapes")).program().graph
    f = tmp_path / "errors.json"
    f.write_text(json.dumps({"matmul": 0.5, "relu": 2.0, "nope": 1.0}))
    o = json_overlay(f, graph)
    assert o.name == "errors" and o.levels == {"matmul": 0.0, "relu": 1.0}
    assert o.notes == ["1 of 3 names are not nodes of this graph"]
    f.write_text(json.dumps({"matmul": "slow", "relu": "ok", "add": "ok"}))
    o = json_overlay(f, graph)
    assert [i.label for i in o.legend] == ["ok (2)", "slow (1)"] and o.categories["matmul"] == 1
    f.write_text("[1, 2]")
    with pytest.raises(OverlayFileError, match="not a JSON object"):
        json_overlay(f, graph)
    f.write_text("{")
    with pytest.raises(OverlayFileError, match="Cannot read errors.json"):
        json_overlay(f, graph)


def test_run_time_legend() -> None:
    o = run_time_overlay({"a": 0.1, "b": 1.0})
    assert [i.label for i in o.legend] == ["fastest", "slowest"] and o.levels["b"] == 1.0
