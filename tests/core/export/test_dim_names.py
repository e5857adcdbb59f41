"""A script's own Dim names by the input dimension they stand for (core/export/dim_names.py)."""
from __future__ import annotations

from pt2_viewer.core.export.dim_names import dim_names


def test_named_and_derived_dims() -> None:
    spec = {"dims": {"batch": {"min": 1, "max": 256}},
            "inputs": {"x": [{"dim": "batch"}, "auto", "static"], "y": [{"dim": "batch", "mul": 2, "add": 1}],
                       "z": [{"dim": "seq", "add": -1}, 4], "scale": None}}
    assert dim_names(spec) == {"x.shape[0]": "batch", "y.shape[0]": "2*batch + 1", "z.shape[0]": "seq - 1"}
    assert dim_names(None) == {} and dim_names({"inputs": ["not", "a", "mapping"]}) == {}
