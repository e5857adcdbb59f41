"""The names a script gave its dynamic dimensions (`Dim("batch")`), by the input dimension they stand for, so the
viewer can show `s77 (batch)` where the program only knows `s77`.

Read from the call's JSON dynamic_shapes spec (core/export/dynamic_spec.py): an input dimension given as a named Dim
`{"dim": "batch"}` is named `batch`; a derived one `{"dim": "batch", "mul": 2, "add": 1}` is `2*batch + 1`. Keys are
written as the Symbols panel's "stands for" column writes them (`x.shape[0]`, core/graph/summary.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def dim_names(spec: Mapping[str, Any] | None) -> dict[str, str]:
    """{"x.shape[0]": "batch", ...} for every named Dim of `spec`; {} without a spec."""
    out: dict[str, str] = {}
    inputs = (spec or {}).get("inputs") or {}
    if not isinstance(inputs, Mapping):
        return out
    for name, dims in inputs.items():
        if not isinstance(dims, list):
            continue
        for axis, d in enumerate(dims):
            if isinstance(d, Mapping) and isinstance(d.get("dim"), str):
                out[f"{name}.shape[{axis}]"] = _derived(d["dim"], d.get("mul"), d.get("add"))
    return out


def _derived(name: str, mul: Any, add: Any) -> str:
    text = f"{mul}*{name}" if isinstance(mul, int) and mul != 1 else name
    if isinstance(add, int) and add:
        text += f" + {add}" if add > 0 else f" - {-add}"
    return text
