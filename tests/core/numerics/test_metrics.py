"""Per-node metrics and the first-divergence rule: exact figures on hand-made tensors, and the rule that the first
divergence is where the error enters, not where it is largest."""
from __future__ import annotations

import math

import torch

from pt2_viewer.core.numerics.metrics import NodeError, compare_values, first_divergence, worst


def test_metrics_of_a_known_error() -> None:
    ref = torch.tensor([1.0, -2.0, 4.0, 0.0])
    cand = ref + torch.tensor([0.0, 0.0, 0.5, 0.0])
    e = compare_values("n", "m", ref, cand)
    assert e is not None
    assert e.max_abs == 0.5
    assert e.max_rel == 0.5 / 4.0
    assert math.isclose(e.cosine, float(torch.nn.functional.cosine_similarity(ref, cand, dim=0)), rel_tol=1e-6)
    assert math.isclose(e.sqnr_db, 10 * math.log10(21.0 / 0.25))
    assert (e.nan, e.inf) == (0, 0)


def test_identical_values_have_no_error_and_infinite_sqnr() -> None:
    t = torch.randn(5, 3)
    e = compare_values("n", "n", t, t.clone())
    assert e is not None and (e.max_abs, e.error, e.cosine, e.sqnr_db) == (0.0, 0.0, 1.0, math.inf)


def test_a_nan_the_reference_lacks_is_an_infinite_error_but_a_shared_one_is_not() -> None:
    ref = torch.tensor([1.0, float("nan"), 3.0])
    e = compare_values("n", "n", ref, torch.tensor([1.0, float("nan"), 3.0]))
    assert e is not None and e.error == 0.0 and (e.nan, e.ref_nan) == (1, 1)
    e = compare_values("n", "n", torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, float("inf"), 3.0]))
    assert e is not None and e.error == math.inf and e.inf == 1


def test_low_precision_values_are_compared_in_float64() -> None:
    ref = torch.tensor([1000.0, 1.0])
    e = compare_values("n", "n", ref, ref.to(torch.bfloat16))
    assert e is not None and e.max_abs == 0.0  # both representable in bf16
    e = compare_values("n", "n", torch.tensor([1001.0]), torch.tensor([1001.0]).to(torch.bfloat16))
    assert e is not None and e.max_abs == 1.0  # bf16 spaces values by 4 at 1000: 1001 becomes 1000


def test_a_multi_output_value_is_matched_by_shape() -> None:
    ref = torch.randn(2, 3)
    e = compare_values("bn", "native_bn", ref, (ref * 2, torch.zeros(0), torch.zeros(0)))
    assert e is not None and e.max_rel == 1.0 and e.note == ""
    e = compare_values("n", "n", ref, torch.randn(3, 2))
    assert e is not None and e.error == math.inf and "shape" in e.note


def test_no_tensor_no_comparison() -> None:
    assert compare_values("sym_size", "sym_size", 4, 4) is None


def _e(node: str, error: float) -> NodeError:
    return NodeError(node, node, error, error, 1.0, 0.0, 0, 0)


def test_first_divergence_is_where_the_error_enters() -> None:
    order = ["x", "a", "b", "c", "d"]
    inputs = {"a": ["x"], "b": ["a"], "c": ["b"], "d": ["c", "x"]}
    errors = {"x": _e("x", 0.0), "a": _e("a", 0.001), "b": _e("b", 0.5), "c": _e("c", 9.0), "d": _e("d", 90.0)}
    found = first_divergence(order, errors, inputs, threshold=0.01)
    assert found is not None and found.node == "b" and found.inputs == ["a"]
    assert [e.node for e in worst(errors.values(), 2)] == ["d", "c"]


def test_an_uncompared_node_passes_its_inputs_error_on() -> None:
    # b has no counterpart (a reshape that vanished): c's input is over through it, so c is not the divergence
    order = ["x", "a", "b", "c"]
    inputs = {"a": ["x"], "b": ["a"], "c": ["b"]}
    errors = {"x": _e("x", 0.0), "a": _e("a", 1.0), "c": _e("c", 1.0)}
    found = first_divergence(order, errors, inputs, threshold=0.01)
    assert found is not None and found.node == "a"


def test_placeholders_are_neither_the_divergence_nor_disqualify_an_op() -> None:
    # a bf16 run rounds the weight w past the threshold; the linear reading it is where the error enters
    order = ["w", "x", "linear", "relu"]
    inputs = {"linear": ["x", "w"], "relu": ["linear"]}
    errors = {"w": _e("w", 0.05), "x": _e("x", 0.0), "linear": _e("linear", 0.5), "relu": _e("relu", 0.6)}
    assert first_divergence(order, errors, inputs, threshold=0.01).node == "w"  # type: ignore[union-attr]
    found = first_divergence(order, errors, inputs, threshold=0.01, sources={"w", "x"})
    assert found is not None and found.node == "linear" and found.inputs == ["x", "w"]


def test_no_divergence_within_the_threshold() -> None:
    errors = {"x": _e("x", 0.001), "a": _e("a", 0.009)}
    assert first_divergence(["x", "a"], errors, {"a": ["x"]}, threshold=0.01) is None


def test_json_round_trip_keeps_infinities() -> None:
    e = NodeError("n", "m", math.inf, math.inf, math.nan, -math.inf, 1, 2, note="shape")
    back = NodeError.from_json(e.to_json())
    assert back.max_abs == math.inf and back.sqnr_db == -math.inf and math.isnan(back.cosine)
    assert (back.nan, back.inf, back.note) == (1, 2, "shape")
