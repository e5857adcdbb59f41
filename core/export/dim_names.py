"""The names a script gave its dynamic dimensions (`Dim("batch")`), by the input dimension they stand for, so the
viewer can show `batch` where the program only knows `s77` (`name_symbols`: in every shape of the program shown,
torch's symbol kept underneath for Details and the Symbols panel).

Read from the call's JSON dynamic_shapes spec (core/export/dynamic_spec.py): an input dimension given as a named Dim
`{"dim": "batch"}` is named `batch`; a derived one `{"dim": "batch", "mul": 2, "add": 1}` is `2*batch + 1`. Keys are
written as the Symbols panel's "stands for" column writes them (`x.shape[0]`, core/graph/summary.py).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pt2_viewer.core.model.program import Program
from pt2_viewer.core.model.tensor_meta import Dim, SymDim


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


def symbol_names(program: Program, names: Mapping[str, str]) -> dict[str, str]:
    """torch's symbol -> the script's Dim name, for each symbol of `program` that stands for an input dimension the
    script named with a plain Dim (`Dim("batch")`; a derived `2*batch` is left as torch's symbol). A name two
    symbols would share, or one that is another symbol's name, is not used."""
    found: dict[str, str] = {}
    for sym in program.symbols:
        named = [names[s] for s in sym.sources if s in names and names[s].isidentifier()]
        if named:
            found[sym.name] = named[0]
    taken = {s.name for s in program.symbols}
    counts: dict[str, int] = {}
    for name in found.values():
        counts[name] = counts.get(name, 0) + 1
    return {s: n for s, n in found.items() if counts[n] == 1 and n not in taken}


def name_symbols(program: Program, names: Mapping[str, str]) -> dict[str, str]:
    """Show the script's Dim names in `program`'s shapes: `f32[2*batch, s96]` where torch wrote `f32[2*s6, s96]`.
    Only the text of each shape changes: `SymDim.symbols` keeps torch's names, so finding a symbol's users, the
    Symbols panel's rows and Details (`s6 = batch`) still know it as `s6`. Returns the renaming used."""
    renames = symbol_names(program, names)
    if not renames:
        return renames
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(renames, key=len, reverse=True))) + r")\b")

    def dim(d: Dim) -> Dim:
        if isinstance(d, SymDim) and set(d.symbols) & renames.keys():
            return replace(d, text=pattern.sub(lambda m: renames[m.group(1)], d.text))
        return d

    for _path, graph in program.all_graphs():
        for value in graph.values.values():
            meta = value.meta
            if meta is not None and set(meta.symbols) & renames.keys():
                value.meta = replace(meta, sizes=tuple(dim(d) for d in meta.sizes),
                                     strides=tuple(dim(d) for d in meta.strides),
                                     storage_offset=dim(meta.storage_offset))
            expr = dim(value.expr) if value.expr is not None else None
            if isinstance(expr, SymDim):
                value.expr = expr
    return renames
