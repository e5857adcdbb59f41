"""A program that changes its inputs in place (`x.add_(y)`, `x.addcdiv_(...)`, `x.addmv_(...)`) compared with what
it becomes: each side starts from the user's inputs as they were. Before, the reference's in-place op changed the
inputs the candidate then read, and the comparison reported a divergence that was not there."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.numerics.job import run_job
from tests.run_programs import MUTATING, run_program_path


@pytest.mark.parametrize("name", [n for n in MUTATING if n != "resize_inplace"])  # resize changes no value
def test_an_in_place_program_agrees_with_its_core_decomposition(name: str, tmp_path: Path) -> None:
    """The two graphs are stepped side by side: the exported one keeps `add_`, its decomposition does not."""
    result = run_job({"program": str(run_program_path(name)), "candidate": "core"}, tmp_path, lambda _e: None)
    assert result["ok"], result.get("error")
    assert result["compared"] >= 1 and result["first_divergence"] is None, result["worst"]
    assert all(row["max_abs"] == 0 for row in result["nodes"]), result["nodes"]
