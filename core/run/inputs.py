"""Inputs for running a program: the sample inputs saved with it, or inputs generated from its signature; and a check
that says in plain words why given inputs break the program's shape constraints.

Generated inputs take each dynamic size from the user's override, else the size export traced with, kept inside the
symbol's range; dtypes come from the program; values are seeded random (normal for floats; integers in [0, 10), or
[0, num_embeddings) when the input feeds an embedding, so token ids stay valid).

The check runs before the program does, because torch's own messages ("Guard failed: x.size()[0] <= 16") name a
guard rather than the problem, and a size of 1 for a dim exported as dynamic may even run silently: export
specialises sizes 0 and 1, so dynamic dims start at 2.

Ranges come from torch's `range_constraints`, whose ends may be torch's `int_oo` (unbounded: `Dim.AUTO`,
`Dim.DYNAMIC`, a `Dim` without max), sympy's `oo`, or not a number at all; only a plain integer end bounds a size.
User inputs are read from the graph signature's input specs, not from `graph_signature.user_inputs`, because an
input export specialised on (None, an int or bool or float or str it was not told was dynamic) is a
`ConstantArgument` whose `user_inputs` entry is the value itself, not a placeholder name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.jobs.errors import JobFailure

DEFAULT_INT_HIGH = 10
DEFAULT_SIZE = 4  # a dynamic size, or a dynamic int input, with no traced value to start from


@dataclass
class UserInput:
    name: str  # the placeholder's name, as the viewer shows it
    example: Any  # the placeholder's meta["val"] (a FakeTensor, SymInt, SymFloat, SymBool), or a constant's value
    constant: bool = False  # export specialised on this value (None, int, float, bool, str): pass it back as it was


@dataclass
class Inputs:
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    source: str  # "sample" or "generated"
    sizes: dict[str, int] = field(default_factory=dict)  # symbol -> value the inputs give it


def user_inputs(ep: Any) -> list[UserInput]:
    """Every user input in the order of the flattened (args, kwargs): tensors, symbolic scalars and constants."""
    from torch.export.graph_signature import ConstantArgument, InputKind

    by_name = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    out: list[UserInput] = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind != InputKind.USER_INPUT:
            continue
        arg = spec.arg
        if isinstance(arg, ConstantArgument):
            out.append(UserInput(arg.name, arg.value, constant=True))
            continue
        node = by_name.get(arg.name)
        out.append(UserInput(arg.name, node.meta.get("val") if node is not None else None))
    return out


def range_end(value: Any) -> int | None:
    """A range end as an int, or None when it is unbounded (int_oo, oo), symbolic, or not an integer."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if getattr(value, "is_Integer", False):  # sympy.Integer; torch's int_oo is_finite, but is not an Integer
        return int(value)
    return None


def symbol_ranges(ep: Any) -> dict[str, tuple[int | None, int | None]]:
    """symbol name -> (min, max); an end is None when unbounded."""
    return {str(sym): (range_end(vr.lower), range_end(vr.upper)) for sym, vr in ep.range_constraints.items()}


def pick_size(hint: Any, lo: int | None, hi: int | None, floor: int = 0) -> int:
    """A value inside [lo, hi]: the traced `hint` when known, else max(lo, DEFAULT_SIZE); never below `floor`."""
    low = max(lo if lo is not None else floor, floor)
    value = hint if isinstance(hint, int) and not isinstance(hint, bool) else max(low, DEFAULT_SIZE)
    value = max(value, low)
    return min(value, hi) if hi is not None and hi >= low else value


@dataclass
class InputSymbol:
    """A plain symbol of the user inputs where it first appears: a tensor dim or a dynamic int input."""

    symbol: str  # "s77"
    source: str  # "x.shape[0]", or "n" for an int input
    hint: Any  # the value export traced with, when torch kept it
    is_dim: bool  # a tensor dim (export specialises 0 and 1, so it starts at 2), not an int input


def input_symbols(ep: Any) -> list[InputSymbol]:
    """Every plain symbol of the user inputs, once, in input order (then dim order)."""
    import torch

    out: dict[str, InputSymbol] = {}
    for ui in user_inputs(ep):
        ex = ui.example
        if isinstance(ex, torch.Tensor):
            places = [(s, f"{ui.name}.shape[{d}]") for d, s in enumerate(ex.shape)]
        else:
            places = [(ex, ui.name)]
        for s, source in places:
            if isinstance(s, torch.SymInt) and s.node.expr.is_Symbol:
                name = str(s.node.expr)
                out.setdefault(name, InputSymbol(name, source, s.node.hint, isinstance(ex, torch.Tensor)))
    return list(out.values())


def dim_sources(ep: Any) -> dict[str, str]:
    """symbol -> the first input dim (or int input) it stands for, e.g. {'s23': 'x.shape[0]', 's5': 'n'}: how
    messages name a symbol."""
    return {s.symbol: s.source for s in input_symbols(ep)}


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
    """A value for every symbol of the inputs: the override (by symbol or 'x.shape[0]'), else the traced size kept
    inside the symbol's range (or a small default inside it when torch kept no traced size)."""
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
    for s in input_symbols(ep):
        lo, hi = ranges.get(s.symbol, (None, None))
        sizes[s.symbol] = pick_size(s.hint, lo, hi, floor=2 if s.is_dim else 0)
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
        elif isinstance(ex, (torch.SymFloat, torch.SymBool)):
            hint = ex.node.hint  # a dynamic float or bool input: the value it was traced with
            flat.append(hint if hint is not None else (1.0 if isinstance(ex, torch.SymFloat) else True))
        else:
            flat.append(ex)  # a constant input export specialised on (None, int, float, bool, str): pass it back
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

    def check_symbol(sym: str, got: int, where: str, is_dim: bool) -> None:
        if sym in seen:
            if seen[sym][0] != got:
                problems.append(f"{where} is {got} but {seen[sym][1]} is {seen[sym][0]}; both are {sym} and must "
                                "be equal.")
            return
        seen[sym] = (got, where)
        lo, hi = ranges.get(sym, (None, None))
        if (lo is not None and got < lo) or (hi is not None and got > hi):
            rng = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
            note = (" torch.export specialises sizes 0 and 1, so a dynamic dim starts at 2."
                    if is_dim and lo is not None and got < 2 <= lo else "")
            problems.append(f"{where} is {got}, outside the range {rng} of {sym}.{note}")

    for ui, value in zip(expected, flat):
        ex = ui.example
        if ui.constant:
            if type(value) is not type(ex) or value != ex:
                problems.append(f"'{ui.name}' is {value!r} but the program was exported with the constant {ex!r}, "
                                "and runs only with that value (export specialised on it).")
            continue
        if isinstance(ex, torch.SymInt):
            if not isinstance(value, int) or isinstance(value, bool):
                problems.append(f"'{ui.name}' should be an int but is a {type(value).__name__}.")
            elif ex.node.expr.is_Symbol:
                check_symbol(str(ex.node.expr), value, ui.name, False)
            else:
                derived.append((ex.node.expr, value, ui.name))
            continue
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
            elif want.node.expr.is_Symbol:
                check_symbol(str(want.node.expr), got, where, True)
            else:
                derived.append((want.node.expr, got, where))
    sizes = {s: v for s, (v, _) in seen.items()}
    for expr, got, where in derived:
        if expr.free_symbols and all(str(s) in sizes for s in expr.free_symbols):
            want_val = range_end(expr.subs({s: sizes[str(s)] for s in expr.free_symbols}))
            if want_val is not None and want_val != got:
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
