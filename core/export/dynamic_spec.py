"""Translate between torch's `dynamic_shapes` argument and the JSON spec the GUI edits and sends back.

The JSON spec (also described in docs/worker.md and applied to by `pt2_viewer.core.export.failures.apply_changes`):

    {"dims":   {"dx": {"min": 4, "max": 256}},          named Dims and their ranges (both optional)
     "inputs": {"x": [{"dim": "dx"}, "static"],          one entry per dimension of a tensor input
                "y": [{"dim": "dx", "mul": 2}, "auto"],  a derived Dim: 2*dx (+ "add")
                "n": null}}                              not dynamic at all (non-tensor or fully static)

A dimension entry is "static", "auto", "dynamic", an int (that exact size), {"hint": "auto"|"dynamic", "min", "max"}
or {"dim": NAME, "mul": M, "add": A}. Inputs are the forward's parameter names; nested inputs (tuples/dicts of
tensors) can only be null in this version.

`to_torch` runs in the worker (torch is imported lazily, inside the functions); `from_torch` describes a spec the
script wrote itself, so the GUI can start editing from it (None when it uses something the JSON cannot express).
"""
from __future__ import annotations

import inspect
from typing import Any

HINTS = ("static", "auto", "dynamic")


class SpecError(ValueError):
    """The JSON dynamic_shapes spec is malformed or names inputs the model does not have."""


def input_names(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> list[str]:
    """The forward's parameter names that receive `args`/`kwargs`, in call order."""
    forward = getattr(module, "forward", module)
    try:
        bound = inspect.signature(forward).bind(*args, **(kwargs or {}))
    except (TypeError, ValueError):
        return [f"arg{i}" for i in range(len(args))] + list(kwargs or {})
    return list(bound.arguments)


def flat_input_names(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> list[str]:
    """Names of the flattened inputs in the order strict export numbers them (`L['flat_args'][i]`)."""
    from torch.utils._pytree import keystr, tree_flatten_with_path

    names = input_names(module, args, kwargs)
    flat, _ = tree_flatten_with_path((tuple(args), dict(kwargs or {})))
    out: list[str] = []
    for path, _leaf in flat:
        group, key, rest = path[0], path[1], path[2:]
        if getattr(group, "idx", 0) == 0:  # positional
            idx = getattr(key, "idx", 0)
            head = names[idx] if idx < len(names) else f"arg{idx}"
        else:
            head = str(getattr(key, "key", key))
        out.append(head + keystr(rest))
    return out


def to_torch(spec: dict[str, Any], module: Any, args: tuple[Any, ...],
             kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build torch's `dynamic_shapes` (a dict by parameter name) from the JSON spec."""
    from torch.export import Dim

    if not isinstance(spec, dict):
        raise SpecError(f"dynamic_shapes must be a JSON object with 'inputs' (and 'dims'), not {type(spec).__name__}")
    inputs = spec.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise SpecError("dynamic_shapes 'inputs' must map input names to lists of dimension entries")
    names = input_names(module, args, kwargs)
    unknown = sorted(set(inputs) - set(names))
    if unknown:
        raise SpecError(f"dynamic_shapes names inputs the model does not take: {', '.join(unknown)} "
                        f"(its inputs are: {', '.join(names) or 'none'})")
    roots: dict[str, Any] = {}
    for name, rng in (spec.get("dims") or {}).items():
        rng = rng or {}
        try:
            roots[name] = Dim(name, min=rng.get("min"), max=rng.get("max"))
        except (AssertionError, ValueError, TypeError) as e:
            raise SpecError(f"named dim '{name}': {e}") from None
    values = dict(zip(names, list(args) + list((kwargs or {}).values())))
    out: dict[str, Any] = {}
    for name in names:
        entry = inputs.get(name)
        if entry is None:
            out[name] = None
            continue
        if not isinstance(entry, list):
            raise SpecError(f"dynamic_shapes for '{name}' must be a list with one entry per dimension, or null")
        rank = getattr(values.get(name), "ndim", None)
        if rank is not None and len(entry) != rank:
            raise SpecError(f"dynamic_shapes for '{name}' has {len(entry)} entries but the input has {rank} "
                            f"dimensions")
        out[name] = tuple(_dim_to_torch(e, roots, f"{name}[{i}]") for i, e in enumerate(entry))
    return out


def _dim_to_torch(entry: Any, roots: dict[str, Any], where: str) -> Any:
    from torch.export import Dim

    if entry is None or entry == "static":
        return Dim.STATIC
    if entry == "auto":
        return Dim.AUTO
    if entry == "dynamic":
        return Dim.DYNAMIC
    if isinstance(entry, bool):
        raise SpecError(f"dynamic_shapes {where}: {entry!r} is not a dimension entry")
    if isinstance(entry, int):
        return entry
    if isinstance(entry, dict) and entry.get("hint") in ("auto", "dynamic"):
        hint = Dim.AUTO if entry["hint"] == "auto" else Dim.DYNAMIC
        return hint(min=entry.get("min"), max=entry.get("max"))
    if isinstance(entry, dict) and isinstance(entry.get("dim"), str):
        name = entry["dim"]
        if name not in roots:
            roots[name] = Dim(name)
        dim = roots[name]
        mul, add = int(entry.get("mul", 1)), int(entry.get("add", 0))
        if mul != 1:
            dim = mul * dim
        if add:
            dim = dim + add
        return dim
    raise SpecError(f"dynamic_shapes {where}: {entry!r} is not one of {', '.join(HINTS)}, an int, "
                    f"{{'dim': NAME}} or {{'hint': 'auto', 'min': .., 'max': ..}}")


def from_torch(dynamic_shapes: Any, module: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Describe torch's `dynamic_shapes` as the JSON spec; None when it cannot be expressed (nested inputs)."""
    if dynamic_shapes is None:
        return {"dims": {}, "inputs": {}}
    names = input_names(module, args, kwargs)
    if isinstance(dynamic_shapes, (tuple, list)):
        per_input = dict(zip(names, dynamic_shapes))
    elif isinstance(dynamic_shapes, dict):
        per_input = dict(dynamic_shapes)
    else:
        return None
    values = dict(zip(names, list(args) + list((kwargs or {}).values())))
    dims: dict[str, dict[str, int]] = {}
    inputs: dict[str, Any] = {}
    try:
        for name, shape in per_input.items():
            rank = getattr(values.get(name), "ndim", None)
            if shape is None:
                inputs[name] = None
            elif isinstance(shape, dict) and rank is not None:
                inputs[name] = [_dim_from_torch(shape.get(i), dims) for i in range(rank)]
            elif isinstance(shape, (tuple, list)) and all(not isinstance(s, (tuple, list, dict)) for s in shape):
                inputs[name] = [_dim_from_torch(s, dims) for s in shape]
            else:
                return None
    except _Inexpressible:
        return None
    return {"dims": dims, "inputs": inputs}


class _Inexpressible(Exception):
    pass


def _dim_from_torch(dim: Any, dims: dict[str, dict[str, int]]) -> Any:
    from torch.export.dynamic_shapes import _DerivedDim, _DimHint, _DimHintType, _StaticDim

    if dim is None:
        return "static"
    if isinstance(dim, int):
        return dim
    if isinstance(dim, _DimHint):
        name = {_DimHintType.AUTO: "auto", _DimHintType.DYNAMIC: "dynamic", _DimHintType.STATIC: "static"}[dim.type]
        if dim.min is None and dim.max is None or name == "static":
            return name
        return {"hint": name, **{k: v for k, v in (("min", dim.min), ("max", dim.max)) if v is not None}}
    if isinstance(dim, _StaticDim):
        return int(dim.value)
    if isinstance(dim, _DerivedDim):
        root = dim.root
        _record_root(root, dims)
        add = int(dim.fn(0))
        ref: dict[str, Any] = {"dim": root.__name__}
        if int(dim.fn(1)) - add != 1:
            ref["mul"] = int(dim.fn(1)) - add
        if add:
            ref["add"] = add
        return ref
    if hasattr(dim, "__name__") and hasattr(dim, "min"):
        _record_root(dim, dims)
        return {"dim": dim.__name__}
    raise _Inexpressible(repr(dim))


def _record_root(dim: Any, dims: dict[str, dict[str, int]]) -> None:
    rng: dict[str, int] = {}
    lo, hi = dim.min, dim.max
    if isinstance(lo, int) and lo not in (0, 2):
        rng["min"] = int(lo)
    if isinstance(hi, int) and hi < 2**62:
        rng["max"] = int(hi)
    dims[dim.__name__] = rng
