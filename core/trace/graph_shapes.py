"""A graph's statements of one shape parsed once: a big graph's text repeats a few statements layer after layer,
each time with other names (`linear_5: "f32[2, 8][8, 1]cpu" = torch._C._nn.linear(x_4, l_..._5_..._weight_, ...)`,
then `linear_6: ... (x_5, ...)`). The first statements of a shape are parsed with `ast` as every other
(core/trace/graph_pieces.py); from one of them a `Shape` is learnt; a later line of that shape is read from the
shape and its own names, not parsed again.

Why: the 10,000-node graph of bench/bench_trace_graph.py has 6,000 node statements of four shapes; `ast` building
a tree for each, and the reader walking it, was most of the graph's open (it opened at 1.3x a `.pt2` of that size).

What a shape is, exactly: a line whose digits are all that differ from the shape's line (`key`: each run of digits
one `0`), whose digits outside the shape's variable names (an annotation's sizes, a constant, a target's
`conv2d`) are the shape's own, and whose names are read at the places the shape's names stand (its digits may
make a name longer). Such a line is the same statement as the shape's, with those names: the same tokens, so the
same tree. Only the statements the reader takes the same way whatever they name are learnt: `name[: "ann"] =
call(args)` of a dotted function (never `self.`), or `a OP b`, whose arguments are names, constants and lists of
them, the whole line one statement with no comment, in ASCII (`ast`'s columns are bytes). What depends on the
names (is it a value of the graph? a method of one?) is decided as the line is read (core/trace/graph_text.py).
"""
from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

_DIGITS = re.compile(r"[0-9]+")
_MAX_PER_KEY = 8  # shapes kept for one key (the same statement with other sizes); more are parsed as they come
BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "and_", ast.BitOr: "or_",
           ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}

# An argument as the shape keeps it: ("name", slot) a name of the line, ("const", value), ("list", [arguments]).
Spec = tuple[str, Any]


class _NotAShape(Exception):
    pass


@dataclass(frozen=True)
class Shape:
    """A statement learnt from one line: its node's target, how its arguments are made, and how its names are
    spelt from a line's digit runs."""

    target: str  # `torch._C._nn.linear`, `operator.add`
    annotation: str | None
    method_of: str | None  # `x` of `x.flatten(1)`: if it names a value, the line is a method call: not this shape
    args: tuple[tuple[str, str, Spec], ...]  # (keyword or "", "positional" / "keyword", how it is made)
    spelling: str  # the names, NUL-separated, each digit run inside one `{i}` (the line's i-th run): a format
    fixed: Callable[[list[str]], Any] | None  # the line's runs outside the names ...
    fixed_digits: Any  # ... which must be these (the shape line's own)

    def names(self, runs: list[str]) -> list[str] | None:
        """The names of a line of this shape's key with digit runs `runs`; None if it is not this shape."""
        if self.fixed is not None and self.fixed(runs) != self.fixed_digits:
            return None
        return self.spelling.format(*runs).split("\0")


class Shaped(NamedTuple):
    """A line read by its shape, in place of a statement: `lineno` as `ast` numbers a statement of the text (a
    tuple: one is made per line read)."""

    shape: Shape
    names: list[str]  # the node's own name first
    line: str
    lineno: int
    end_lineno: int


class LineShapes:
    """The shapes learnt from one graph's text, by key."""

    def __init__(self) -> None:
        self._by_key: dict[str, list[Shape]] = {}
        self._met: dict[str, int] = {}  # key -> lines of it met and not read by a shape

    def match(self, line: str, lineno: int) -> Shaped | None:
        if "#" in line:
            return None
        key = _DIGITS.sub("0", line)
        shapes = self._by_key.get(key)
        if shapes is None:
            self._met[key] = self._met.get(key, 0) + 1
            return None
        runs = _DIGITS.findall(line)
        for shape in shapes:
            names = shape.names(runs)
            if names is not None:
                return Shaped(shape, names, line, lineno, lineno)
        return None

    def learn(self, statement: ast.stmt, line: str) -> None:
        """Learn `statement`, parsed from `line` alone on its line, if the text has had its key before."""
        if "#" in line or not line.isascii():
            return
        key = _DIGITS.sub("0", line)
        if self._met.get(key, 0) < 2 or len(self._by_key.get(key, ())) >= _MAX_PER_KEY:
            return  # a line of a key met once is not learnt: most lines of a small graph are one of a kind
        indent = len(line) - len(line.lstrip(" "))
        if statement.lineno != statement.end_lineno or statement.col_offset != indent \
                or statement.end_col_offset != len(line.rstrip()):
            return
        try:
            shape = _shape(statement, line)
        except _NotAShape:
            return
        self._by_key.setdefault(key, []).append(shape)


def _shape(s: ast.stmt, line: str) -> Shape:
    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None:
        if not (isinstance(s.annotation, ast.Constant) and isinstance(s.annotation.value, str)):
            raise _NotAShape
        target, annotation, value = s.target, s.annotation.value, s.value
    elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
        target, annotation, value = s.targets[0], None, s.value
    else:
        raise _NotAShape
    names: list[ast.Name] = [target]
    method_of = None
    if isinstance(value, ast.Call):
        dotted = dotted_name(value.func)
        if dotted is None or dotted.startswith("self."):
            raise _NotAShape
        if isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name):
            method_of = value.func.value.id
        op_target = dotted if "." in dotted else f"builtins.{dotted}"
        args = [("", "positional", _spec(a, names)) for a in value.args]
        for k in value.keywords:
            if k.arg is None:
                raise _NotAShape
            args.append((k.arg, "keyword", _spec(k.value, names)))
    elif isinstance(value, ast.BinOp):
        op_target = f"operator.{BINARY.get(type(value.op), type(value.op).__name__.lower())}"
        args = [("", "positional", _spec(value.left, names)), ("", "positional", _spec(value.right, names))]
    else:
        raise _NotAShape
    runs = [(m.start(), m.end(), m.group()) for m in _DIGITS.finditer(line)]
    spelt: list[str] = []
    inside: set[int] = set()
    for n in names:
        start, end = n.col_offset, n.end_col_offset or 0
        at, parts = start, []
        for i, (a, b, _) in enumerate(runs):
            if start <= a and b <= end:
                parts.append(f"{line[at:a]}{{{i}}}")
                at = b
                inside.add(i)
        spelt.append("".join(parts) + line[at:end])
    outside = [i for i in range(len(runs)) if i not in inside]
    fixed = operator.itemgetter(*outside) if outside else None
    return Shape(op_target, annotation, method_of, tuple(args), "\0".join(spelt), fixed,
                 fixed([r for _, _, r in runs]) if fixed is not None else None)


def _spec(e: ast.expr, names: list[ast.Name]) -> Spec:
    if isinstance(e, ast.Name):
        names.append(e)
        return ("name", len(names) - 1)
    if isinstance(e, ast.Constant) and not isinstance(e.value, bytes):
        return ("const", e.value)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
            and isinstance(e.operand.value, (int, float)):
        return ("const", -e.operand.value)
    if isinstance(e, (ast.Tuple, ast.List)):
        return ("list", [_spec(x, names) for x in e.elts])
    raise _NotAShape


def dotted_name(expr: ast.expr) -> str | None:
    """`torch.ops.aten.add.Tensor` for an attribute chain of names; None for anything else."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))
