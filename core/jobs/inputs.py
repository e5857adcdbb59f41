"""Inputs for running a program: the sample inputs saved with it, or inputs generated from its signature; and a check
that says in plain words why given inputs break the program's shape constraints.

Generated inputs take each dynamic size from the user's override, else the size export traced with, kept inside the
symbol's range; dtypes come from the program; values are seeded random (normal for floats; integers in [0, 10), or
[0, num_embeddings) when the input feeds an embedding, so token ids stay valid).

The check runs before the program does, because torch's own messages ("Guard failed: x.size()[0] <= 16") name a
guard rather than the problem, and a size of 1 for a dim exported as dynamic may even run silently: export
specialises sizes 0 and 1, so dynamic dims start at 2.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.jobs.errors import JobFailure

DEFAULT_INT_HIGH = 10


@dataclass
class UserInput:
    name: str  # the placeholder's name, as the viewer shows it
    example: Any  # the placeholder's meta["val"]: a FakeTensor, SymInt, int, float, bool or None


@dataclass
class Inputs:
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    source: str  # "sample" or "generated"
    sizes: dict[str, int] = field(default_factory=dict)  # symbol -> value the inputs give it


def user_inputs(ep: Any) -> list[UserInput]:
    names = list(ep.graph_signature.user_inputs)
    by_name = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    return [UserInput(name, by_name[name].meta.get("val")) for name in names]


def symbol_ranges(ep: Any) -> dict[str, tuple[int, int | None]]:
    """symbol name -> (min, max); max None when unbounded."""
    out: dict[str, tuple[int, int | None]] = {}
    for sym, vr in ep.range_constraints.items():
        lo, hi = vr.lower, vr.upper
        out[str(sym)] = (int(lo) if lo.is_finite else 0, int(hi) if hi.is_finite else None)
    return out


def dim_sources(ep: Any) -> dict[str, str]:
    """symbol -> the first input dim it stands for, e.g. {'s23': 'x.shape[0]'}: how messages name a symbol."""
    import torch

    out: dict[str, str] = {}
    for ui in user_inputs(ep):
        if isinstance(ui.example, torch.Tensor):
            for d, s in enumerate(ui.example.shape):
                if isinstance(s, torch.SymInt) and s.node.expr.is_Symbol:
                    out.setdefault(str(s.node.expr), f"{ui.name}.shape[{d}]")
    return out


def _embedding_sizes(ep: Any) -> dict[str, int]:
    """placeholder name -> num_embeddings, for integer inputs read by aten.embedding."""
    import torch

    out: dict[str, int] = {}
    for n in ep.graph.nodes:
        if n.op == "call_function" and n.target is torch.ops.aten.embedding.default and len(n.args) >= 2:
            weight, ids = n.args[0], n.args[1]
            val = getattr(weight, "meta", {}).get("val")
            if getattr(ids, "op", "") == "placeholder" and val is not None and isinstance(val.shape[0], int):
                out[ids.name] = int(val.shape[0])
    return out


def choose_sizes(ep: Any, overrides: dict[str, int] | None = None) -> dict[str, int]:
    """A value for every symbol of the inputs: the override (by symbol or 'x.shape[0]'), else the traced size."""
    import torch

    overrides = dict(overrides or {})
    sources = dim_sources(ep)
    by_source = {src: sym for sym, src in sources.items()}
    for key in list(overrides):
        if key in by_source:
            overrides[by_source[key]] = overrides.pop(key)
    ranges = symbol_ranges(ep)
    unknown = sorted(set(overrides) - set(ranges) - set(sources))
    if unknown:
        known = ", ".join(f"{s} ({sources.get(s, '?')})" for s in sorted(ranges)) or "none: every size is static"
        raise JobFailure("input", f"No dynamic dim is called {', '.join(unknown)}.", f"The program's dims: {known}.")
    sizes: dict[str, int] = {}
    for ui in user_inputs(ep):
        if not isinstance(ui.example, torch.Tensor):
            continue
        for s in ui.example.shape:
            if isinstance(s, torch.SymInt) and s.node.expr.is_Symbol:
                name = str(s.node.expr)
                lo, hi = ranges.get(name, (2, None))
                hint = s.node.hint if isinstance(s.node.hint, int) else max(lo, 2)
                sizes.setdefault(name, min(max(hint, lo), hi) if hi is not None else max(hint, lo))
    sizes.update({k: int(v) for k, v in overrides.items()})
    return sizes


def _concrete(dim: Any, sizes: dict[str, int]) -> int:
    import torch

    if isinstance(dim, torch.SymInt):
        expr = dim.node.expr.subs({sym: sizes[str(sym)] for sym in dim.node.expr.free_symbols if str(sym) in sizes})
        if not expr.is_number:
            raise JobFailure("input", f"Cannot choose a size for {dim.node.expr}.",
                             "Give a value for each of its symbols.")
        return int(expr)
    return int(dim)


def generate_inputs(ep: Any, overrides: dict[str, int] | None = None, seed: int = 0) -> Inputs:
    """Random inputs that satisfy the program's signature: shapes within ranges, dtypes from the program."""
    import torch
    import torch.utils._pytree as pytree

    sizes = choose_sizes(ep, overrides)
    gen = torch.Generator().manual_seed(seed)
    highs = _embedding_sizes(ep)
    flat: list[Any] = []
    for ui in user_inputs(ep):
        ex = ui.example
        if isinstance(ex, torch.Tensor):
            shape = [_concrete(d, sizes) for d in ex.shape]
            flat.append(_random_tensor(shape, ex.dtype, highs.get(ui.name, DEFAULT_INT_HIGH), gen))
        elif isinstance(ex, torch.SymInt):
            flat.append(_concrete(ex, sizes))
        else:
            flat.append(ex)  # a constant input export specialised on: pass it back as it was
    args, kwargs = pytree.tree_unflatten(flat, ep.call_spec.in_spec)
    return Inputs(tuple(args), dict(kwargs), "generated", sizes)


def _random_tensor(shape: list[int], dtype: Any, int_high: int, gen: Any) -> Any:
    import torch

    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, generator=gen, dtype=dtype if dtype.itemsize >= 2 else torch.float32).to(dtype)
    return torch.randint(0, max(int_high, 1), shape, generator=gen).to(dtype)


def check_inputs(ep: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, int]:
    """Raise `JobFailure` naming every way the inputs break the program's signature; return the symbol values."""
    import torch
    import torch.utils._pytree as pytree

    flat, spec = pytree.tree_flatten((args, kwargs))
    expected = user_inputs(ep)
    if spec != ep.call_spec.in_spec:
        raise JobFailure("input", f"The inputs do not have the structure the program takes ({len(flat)} values given, "
                         f"{len(expected)} expected: {', '.join(u.name for u in expected)}).",
                         "Pass the inputs in the same arrangement as at export.")
    ranges = symbol_ranges(ep)
    sources = dim_sources(ep)
    problems: list[str] = []
    seen: dict[str, tuple[int, str]] = {}
    derived: list[tuple[Any, int, str]] = []
    for ui, value in zip(expected, flat):
        ex = ui.example
        if not isinstance(ex, torch.Tensor):
            continue
        if not isinstance(value, torch.Tensor):
            problems.append(f"'{ui.name}' should be a tensor but is a {type(value).__name__}.")
            continue
        if value.dtype != ex.dtype:
            problems.append(f"'{ui.name}' is {_dt(value.dtype)} but the program was exported for {_dt(ex.dtype)}.")
        if value.dim() != ex.dim():
            problems.append(f"'{ui.name}' has {value.dim()} dims but the program expects {ex.dim()} "
                            f"(shape {_shape(ex.shape)}).")
            continue
        for d, (want, got) in enumerate(zip(ex.shape, value.shape)):
            where = f"{ui.name}.shape[{d}]"
            if not isinstance(want, torch.SymInt):
                if int(want) != got:
                    problems.append(f"{where} is {got} but the program was exported with the static size {want}.")
                continue
            expr = want.node.expr
            if not expr.is_Symbol:
                derived.append((expr, got, where))
                continue
            sym = str(expr)
            if sym in seen:
                if seen[sym][0] != got:
                    problems.append(f"{where} is {got} but {seen[sym][1]} is {seen[sym][0]}; both are {sym} and must "
                                    "be equal.")
                continue
            seen[sym] = (got, where)
            lo, hi = ranges.get(sym, (0, None))
            if got < lo or (hi is not None and got > hi):
                rng = f"[{lo}, {hi if hi is not None else 'inf'}]"
                note = " torch.export specialises sizes 0 and 1, so a dynamic dim starts at 2." if got < 2 <= lo else ""
                problems.append(f"{where} is {got}, outside the range {rng} of {sym}.{note}")
    sizes = {s: v for s, (v, _) in seen.items()}
    for expr, got, where in derived:
        if expr.free_symbols and all(str(s) in sizes for s in expr.free_symbols):
            want_val = int(expr.subs({s: sizes[str(s)] for s in expr.free_symbols}))
            if want_val != got:
                problems.append(f"{where} is {got} but must be {expr} = {want_val}.")
    if problems:
        names = ", ".join(f"{s} = {src}" for s, src in sorted(sources.items()))
        raise JobFailure("constraint", "The inputs break the program's shape or dtype constraints: "
                         + " ".join(problems),
                         "Change the inputs (or the dynamic dim overrides) to fit; the program's dynamic dims are "
                         f"{names or 'none'}.")
    return sizes


def _dt(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def _shape(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"
