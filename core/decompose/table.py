"""Read a user's custom decomposition table from a Python file, with a clear message for every way it can be wrong.

The file defines, as in the torch.export tutorial, either a module-level dict mapping ATen ops to Python functions, or
a function (no arguments) returning one. We look for the name the user gave, else for a conventional name
(`decomp_table`, `DECOMP_TABLE`, `get_decomp_table`, ...), else for the one module-level dict keyed by ATen ops.
An op packet key (`torch.ops.aten.conv2d`) stands for all its overloads.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.loading import import_file

CONVENTIONAL_NAMES = ("decomp_table", "DECOMP_TABLE", "decomposition_table", "DECOMPOSITION_TABLE", "table",
                      "get_decomp_table", "make_decomp_table", "get_decomposition_table")
HINT = ("The file should define a dict from ATen ops to functions, e.g. "
        "`decomp_table = torch.export.default_decompositions(); "
        "decomp_table[torch.ops.aten.conv2d.default] = my_conv2d`, or a function returning one.")


def _is_op_key(k: Any) -> bool:
    import torch

    return isinstance(k, (torch._ops.OpOverload, torch._ops.OpOverloadPacket))


def _find(module: Any, path: Path, name: str | None) -> tuple[str, Any]:
    if name is not None:
        if not hasattr(module, name):
            raise JobFailure("table", f"'{path.name}' defines no '{name}'.", HINT)
        return name, getattr(module, name)
    for n in CONVENTIONAL_NAMES:
        if hasattr(module, n):
            return n, getattr(module, n)
    found = [(n, v) for n, v in vars(module).items()
             if not n.startswith("_") and isinstance(v, dict) and v and any(_is_op_key(k) for k in v)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise JobFailure("table", f"'{path.name}' has no decomposition table: no dict of ATen ops and none of the "
                         f"names {', '.join(CONVENTIONAL_NAMES)}.", HINT)
    raise JobFailure("table", f"'{path.name}' has several op tables ({', '.join(n for n, _ in found)}).",
                     "Name the one to use (table name in the dialog, --table-name on the command line).")


def load_table(path: str | Path, name: str | None = None) -> dict[Any, Callable[..., Any]]:
    """Import the file and return its decomposition table as {OpOverload: callable}, or raise `JobFailure`."""
    path = Path(path)
    module_name = import_file(path, "decomposition table file")
    try:
        found_name, value = _find(sys.modules[module_name], path, name)
        if callable(value) and not isinstance(value, dict):
            try:
                value = value()
            except Exception as e:
                raise JobFailure("table", f"Calling {found_name}() in '{path.name}' raised {type(e).__name__}: "
                                 f"{first_line(e)}", "Fix the function; it should return the table.") from e
        return _validate(value, found_name, path)
    finally:
        sys.modules.pop(module_name, None)


def _validate(value: Any, name: str, path: Path) -> dict[Any, Callable[..., Any]]:
    if not isinstance(value, dict):
        raise JobFailure("table", f"'{name}' in '{path.name}' is a {type(value).__name__}, not a dict of ops to "
                         "functions.", HINT)
    table: dict[Any, Callable[..., Any]] = {}
    for k, fn in value.items():
        if not _is_op_key(k):
            raise JobFailure("table", f"'{name}' in '{path.name}' has the key {k!r} ({type(k).__name__}), which is "
                             "not an ATen op.", "Keys must be ops such as torch.ops.aten.conv2d.default.")
        if not callable(fn):
            raise JobFailure("table", f"'{name}' in '{path.name}' maps {k} to a {type(fn).__name__}, not a "
                             "function.", HINT)
        for op in _overloads(k):
            table[op] = fn
    return table


def _overloads(key: Any) -> list[Any]:
    import torch

    if isinstance(key, torch._ops.OpOverloadPacket):
        return [getattr(key, o) for o in key.overloads()]
    return [key]
