"""The parts of reading a `.pte`'s logged values that no zoo program reaches (core/numerics/pte_values.py,
core/numerics/metrics.py): a channels-last tensor as the debug buffer holds it (memory order) read back in its dim
order, and a row marked not compared, which the first-divergence search looks through and never names."""
from __future__ import annotations

import math

import torch

from pt2_viewer.core.numerics.metrics import NodeError, first_divergence, not_compared
from pt2_viewer.core.numerics.pte_values import in_dim_order


def test_a_channels_last_tensor_is_read_in_its_dim_order() -> None:
    logical = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)
    in_memory = logical.contiguous(memory_format=torch.channels_last)
    # what the Inspector builds from the debug buffer: the bytes in memory order, viewed with the sizes
    as_logged = torch.frombuffer(bytearray(in_memory.untyped_storage()), dtype=torch.float32).view(2, 3, 4, 5)
    assert not torch.equal(as_logged, logical)
    read, note = in_dim_order(as_logged, (0, 2, 3, 1))
    assert torch.equal(read, logical) and note == "read in its dim order (0, 2, 3, 1)"
    assert in_dim_order(logical, (0, 1, 2, 3)) == (logical, "")


def test_a_row_not_compared_is_never_the_divergence_and_is_looked_through() -> None:
    def row(node: str, error: float) -> NodeError:
        return NodeError(node, node, error, error, 1.0, 0.0, 0, 0)

    skipped = not_compared("b", "addmm_3", "the .pte's value [24, 64] is not the source's [2, 64, 12]")
    assert math.isnan(skipped.error) and skipped.note.startswith("not compared: ")
    assert skipped.to_json()["compared"] is False and "compared" not in row("a", 0.0).to_json()
    assert NodeError.from_json(skipped.to_json()).compared is False
    order, inputs = ["a", "b", "c"], {"b": ["a"], "c": ["b"]}
    assert first_divergence(order, {"a": row("a", 0.0), "b": skipped, "c": row("c", 0.0)}, inputs, 0.01) is None
    found = first_divergence(order, {"a": row("a", 0.5), "b": skipped, "c": row("c", 0.5)}, inputs, 0.01)
    assert found is not None and found.node == "a"  # c inherits a's error through the row not compared
