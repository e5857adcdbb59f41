"""The values of a graph read from its text (core/trace/graph_text.py), typed from print_readable's annotations:
`"f32[s0, 3, 224, 224][150528*s0, 50176, 224, 1]cpu"` a tensor (dtype, sizes, strides, device), `"Sym(s0)"` or
`"Sym(s0 + 1)"` a symbolic int, symbols kept as names.

Each is turned into torch's serialized tensor metadata (what a `.pt2` holds and `Value.meta` parses), a symbolic
size as the sympy `srepr` the archive writes (`Mul(Integer(2), Symbol('s0', integer=True))`), built from the
expression's `ast`, never evaluated. One annotation's metadata is made once and shared by every value that carries it,
as the `.pt2` reader shares equal metadata."""
from __future__ import annotations

import ast
from typing import Any

from pt2_viewer.core.model.expr import parse_srepr
from pt2_viewer.core.model.program import Value, symbol_kind
from pt2_viewer.core.model.tensor_meta import DTYPE_SHORT, SCALAR_TYPES, SymDim

_DTYPE_OF_SHORT = {short: name for name, short in DTYPE_SHORT.items()}
_CODE_OF_DTYPE = {name: code for code, name in SCALAR_TYPES.items()}
_SREPR_OP = {ast.Add: "Add", ast.Mult: "Mul", ast.FloorDiv: "FloorDiv", ast.Mod: "PythonMod", ast.Pow: "Pow"}


class ValueTypes:
    """Values from annotations, with one metadata object per distinct annotation."""

    def __init__(self) -> None:
        self._metas: dict[str, Any] = {}
        self._exprs: dict[str, SymDim | None] = {}

    def value(self, name: str, annotation: str | None) -> Value:
        if annotation is None:
            return Value(name, "tensor")
        if annotation.startswith("Sym(") and annotation.endswith(")"):
            expr = self.sym(annotation[4:-1])
            kind = "sym_int"
            if expr is not None and expr.symbols and (symbol_kind(expr.symbols[0]) or ("", False))[0].endswith("float"):
                kind = "sym_float"
            return Value(name, kind, expr=expr if expr is not None else SymDim(annotation[4:-1], ()))
        meta = self._metas.get(annotation, ...)
        if meta is ...:
            meta = self._metas[annotation] = tensor_meta_json(annotation)
        return Value(name, "tensor", meta_json=meta)

    def sym(self, text: str) -> SymDim | None:
        if text not in self._exprs:
            srepr = _srepr(text)
            self._exprs[text] = None if srepr is None else _sym_dim(srepr)
        return self._exprs[text]


def _sym_dim(srepr: str) -> SymDim:
    parsed = parse_srepr(srepr)
    return SymDim(parsed.text, parsed.symbols)


def tensor_meta_json(annotation: str) -> dict[str, Any] | None:
    """`f32[2, s0][s0, 1]cpu` as torch's serialized `TensorMeta`; None for an annotation of another form."""
    short, bracket, rest = annotation.partition("[")
    dtype = _DTYPE_OF_SHORT.get(short, short)
    code = _CODE_OF_DTYPE.get(dtype)
    if not bracket or code is None:
        return None
    sizes_text, _, rest = rest.partition("]")
    strides_text = ""
    if rest.startswith("["):
        strides_text, _, rest = rest[1:].partition("]")
    sizes = _dims(sizes_text)
    strides = _dims(strides_text) if strides_text else []
    if sizes is None or strides is None:
        return None
    device_type, _, index = rest.strip().partition(":")
    device: dict[str, Any] = {"type": device_type or "cpu"}
    if index.isdigit():
        device["index"] = int(index)
    return {"dtype": code, "sizes": sizes, "strides": strides, "device": device, "requires_grad": False,
            "layout": 7}


def _dims(text: str) -> list[Any] | None:
    """`2, s0*3` -> [{"as_int": 2}, {"as_expr": ...}]; None when a dim is not an expression of ints and names."""
    if not text.strip():
        return []
    try:
        tree = ast.parse(f"[{text}]", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree, ast.List):
        return None
    out: list[Any] = []
    for e in tree.elts:
        if isinstance(e, ast.Constant) and type(e.value) is int:
            out.append({"as_int": e.value})
            continue
        srepr = _srepr_of(e, 0)
        if srepr is None:
            return None
        out.append({"as_expr": {"expr_str": srepr, "hint": None}})
    return out


def _srepr(text: str) -> str | None:
    try:
        return _srepr_of(ast.parse(text, mode="eval").body, 0)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _srepr_of(e: ast.expr, depth: int) -> str | None:
    """A size expression's sympy `srepr`, the form a `.pt2` stores (parsed back by core/model/expr.py)."""
    if depth > 50:
        return None
    if isinstance(e, ast.Name):
        return f"Symbol('{e.id}', integer=True)"
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return f"Integer({e.value})"
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _srepr_of(e.operand, depth + 1)
        return None if inner is None else f"Mul(Integer(-1), {inner})"
    if isinstance(e, ast.BinOp):
        left, right = _srepr_of(e.left, depth + 1), _srepr_of(e.right, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(e.op, ast.Sub):
            return f"Add({left}, Mul(Integer(-1), {right}))"
        op = _SREPR_OP.get(type(e.op))
        return None if op is None else f"{op}({left}, {right})"
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and not e.keywords:
        args = [_srepr_of(a, depth + 1) for a in e.args]
        if any(a is None for a in args):
            return None
        name = {"max": "Max", "min": "Min"}.get(e.func.id, e.func.id)
        return f"{name}({', '.join(a for a in args if a is not None)})"
    return None
