"""Overlays (core/graph/overlays.py) on real programs: dtype, parameter bytes, a user's JSON, a run's heat."""
from __future__ import annotations

import json

import pytest

from pt2_viewer.core.graph.overlays import (
    Overlay,
    OverlayFileError,
    dtype_overlay,
    group_legend,
    group_values,
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


def test_run_time_legend_gives_the_times() -> None:
    o = run_time_overlay({"a": 2e-5, "b": 4e-3})
    assert [i.label for i in o.legend] == ["fastest 20.0 µs", "slowest 4.00 ms"] and o.levels["b"] == 1.0
    assert o.text("a") == "20.0 µs (0% of the slowest)" and o.text("b") == "4.00 ms (100% of the slowest)"


def test_collapsed_groups_sum_bytes_and_time_and_take_the_largest_error() -> None:
    times = run_time_overlay({"a": 1e-3, "b": 3e-3, "c": 1e-2, "d": 1e-4})
    groups = group_values(times, {"layer1": ["a", "b"], "layer2": ["c"], "layer3": ["d"], "empty": ["x"]})
    assert set(groups) == {"layer1", "layer2", "layer3"}  # a group with no value is left in its own colour
    assert groups["layer1"].value == pytest.approx(4e-3) and groups["layer1"].text == "sum 4.00 ms over 2 nodes"
    assert groups["layer2"].level == 1.0 and groups["layer3"].level == 0.0  # the groups' own scale
    assert group_legend(times, groups) == "groups: sum of their nodes, 100.0 µs – 10.00 ms"
    errors = Overlay("Numerics error", levels={"a": 0.2, "b": 0.9, "c": 0.5}, values={"a": 1e-4, "b": 0.3, "c": 1e-2},
                     aggregate="max", fmt=lambda v: f"{v:.3g}")
    worst = group_values(errors, {"layer1": ["a", "b"], "layer2": ["c"]})
    assert worst["layer1"].value == 0.3 and worst["layer1"].level == 0.9  # the worst node's own colour
    assert worst["layer1"].text == "max 0.3 at b (2 nodes)"
    assert group_values(dtype_overlay_of({"a": "float32"}), {"g": ["a"]}) == {}  # categories do not aggregate


def test_a_group_sums_its_weights_once(pt2_path) -> None:  # type: ignore[no-untyped-def]
    """With the weights inside the group (rows of their ops) a group sums the weights, not also the ops reading them;
    without them, the bytes its ops read."""
    program = read_archive(pt2_path("attention_blocks")).program()
    sizes = parameter_bytes_overlay(program, program.graph)
    weights = [n for n in sizes.owners if n.startswith("p_blocks_0_")]
    ops = [n for n in sizes.values if n not in sizes.owners]
    total = sum(sizes.values[w] for w in weights)
    both = group_values(sizes, {"blocks.0": weights + ops})["blocks.0"]
    assert both.value == total and both.count == len(weights)
    only_ops = group_values(sizes, {"g": ops[:1]})["g"]
    assert only_ops.value == sizes.values[ops[0]]


def dtype_overlay_of(values: dict[str, str]) -> Overlay:
    from pt2_viewer.core.graph.overlays import category_overlay

    return category_overlay("dtype", values)
