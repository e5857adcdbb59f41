"""Turn the symbolic expressions torch writes into archives into the short text users read.

Shapes in a `.pt2` are sympy `srepr` strings, e.g. `Mul(Integer(2), Symbol('s77', positive=True, integer=True))`.
We show them as `2*s77`. The string is parsed with `ast` (never evaluated) and printed by a small table of sympy
class names; anything unknown is printed as a call, so no expression is ever lost or fatal.
"""
from __future__ import annotations

import ast
from functools import lru_cache

import msgspec

_INFIX = {"Add": " + ", "Mul": "*", "FloorDiv": " // ", "Mod": " % ", "PythonMod": " % ", "CleanDiv": " / ",
          "IntTrueDiv": " / ", "FloatTrueDiv": " / ", "TruncToInt": None}
_COMPARE = {"Eq": " == ", "Ne": " != ", "LessThan": " <= ", "Le": " <= ", "StrictLessThan": " < ", "Lt": " < ",
            "GreaterThan": " >= ", "Ge": " >= ", "StrictGreaterThan": " > ", "Gt": " > "}
_LOGIC = {"And": " and ", "Or": " or "}


class SymExprText(msgspec.Struct, frozen=True):
    """A symbolic expression as the views show it, and the symbols it mentions."""

    text: str  # readable form, e.g. "2*s77"
    symbols: tuple[str, ...]  # free symbols in order of appearance, e.g. ("s77",)


@lru_cache(maxsize=65536)
def parse_srepr(src: str) -> SymExprText:
    """Readable text and free symbols of a sympy srepr string. Never raises."""
    try:
        tree = ast.parse(src, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return SymExprText(src, ())
    symbols: list[str] = []
    try:
        text = _fmt(tree, symbols, 0)
    except RecursionError:
        return SymExprText(src, ())
    return SymExprText(text, tuple(dict.fromkeys(symbols)))


def _fmt(node: ast.AST, symbols: list[str], depth: int) -> str:
    if depth > 200:
        return "…"
    if isinstance(node, ast.Constant):
        return repr(node.value) if isinstance(node.value, str) else str(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return "-" + _fmt(node.operand, symbols, depth + 1)
    if isinstance(node, ast.Name):
        return {"oo": "inf", "zoo": "zoo", "nan": "nan", "true": "True", "false": "False"}.get(node.id, node.id)
    if isinstance(node, (ast.Tuple, ast.List)):
        return "(" + ", ".join(_fmt(e, symbols, depth + 1) for e in node.elts) + ")"
    if not isinstance(node, ast.Call):
        return ast.unparse(node)
    fn = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
    args = node.args
    if fn == "Symbol" and args and isinstance(args[0], ast.Constant):
        name = str(args[0].value)
        symbols.append(name)
        return name
    if fn in ("Integer", "Float") and args:
        return _fmt(args[0], symbols, depth + 1)
    if fn == "Rational" and len(args) == 2:
        return f"{_fmt(args[0], symbols, depth + 1)}/{_fmt(args[1], symbols, depth + 1)}"
    if fn in ("BooleanTrue",) or fn == "true":
        return "True"
    if fn in ("BooleanFalse",):
        return "False"
    parts = [_fmt(a, symbols, depth + 1) for a in args]
    if fn == "Pow" and len(parts) == 2:
        if parts[1] == "-1":
            return f"1/{_wrap(parts[0])}"
        return f"{_wrap(parts[0])}**{_wrap(parts[1])}"
    if fn == "Mul" and parts and parts[0] == "-1":
        return "-" + "*".join(_wrap(p) for p in parts[1:])
    sep = _INFIX.get(fn) or _COMPARE.get(fn) or _LOGIC.get(fn)
    if sep and len(parts) >= 2:
        if fn == "Add":
            out = parts[0]
            for p in parts[1:]:
                out += f" - {p[1:]}" if p.startswith("-") else f" + {p}"
            return out
        wrap = _wrap if fn not in _COMPARE and fn not in _LOGIC else (lambda s: s)
        return sep.join(wrap(p) for p in parts)
    if fn == "Not" and len(parts) == 1:
        return f"not {_wrap(parts[0])}"
    name = {"Max": "max", "Min": "min", "Abs": "abs", "floor": "floor", "ceiling": "ceil"}.get(fn, fn)
    return f"{name}({', '.join(parts)})"


def _wrap(text: str) -> str:
    """Parenthesise a sub-expression that contains a low-precedence operator."""
    return f"({text})" if (" " in text and not text.startswith(("max(", "min("))) else text


# -- value ranges ------------------------------------------------------------------------------------------------
# torch prints a symbol's range as `VR[2, int_oo]` (range_constraints) or `[2, int_oo]` (its logs); the archive has
# numbers or none. Everything the app shows goes through `range_text`, so a range always reads `[2, ∞]`.
_UNBOUNDED = {"int_oo": "∞", "oo": "∞", "inf": "∞", "-int_oo": "-∞", "-oo": "-∞", "-inf": "-∞"}


def range_text(low: int | float | str | None, high: int | float | str | None) -> str:
    """`[2, ∞]`: None (or torch's int_oo) is an unbounded end."""
    return f"[{_end(low, '-∞')}, {_end(high, '∞')}]"


def torch_range_text(text: str) -> str:
    """torch's spelling (`VR[2, int_oo]`, `[-int_oo, 5]`, `ValueRanges(lower=0, upper=oo, ...)`) as `range_text`
    writes it; anything else is returned unchanged."""
    t = text.strip()
    if t.startswith("ValueRanges("):
        parts = dict(p.strip().split("=", 1) for p in t[len("ValueRanges("):-1].split(",") if "=" in p)
        if "lower" in parts and "upper" in parts:
            return range_text(parts["lower"], parts["upper"])
        return text
    t = t.removeprefix("VR")
    if t.startswith("[") and t.endswith("]") and t.count(",") == 1:
        low, high = (p.strip() for p in t[1:-1].split(","))
        return range_text(low, high)
    return text


def _end(value: int | float | str | None, unbounded: str) -> str:
    if value is None:
        return unbounded
    text = str(value).strip()
    return _UNBOUNDED.get(text, text)
