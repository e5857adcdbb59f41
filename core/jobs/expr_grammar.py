"""Check a symbolic expression from a program's JSON before torch evaluates it.

torch's deserializer turns every `expr_str` (a size like `Add(Symbol('s0', integer=True), Integer(1))`, written by
`sympy.srepr`) back into sympy with `sympy.sympify`, which evaluates the text as Python with builtins in reach: a file
can put `__import__('os').system(...)` there. So the worker parses each expression with Python's own parser first and
accepts only what torch writes: calls of sympy and torch size functions by name, symbol names, numbers, arithmetic and
comparisons. No attributes, subscripts, lambdas or other names; exponents and integers small enough that sympy cannot
be made to compute for ever. Pure Python, no torch.
"""
from __future__ import annotations

import ast
import re

MAX_LENGTH = 20_000  # characters; torch's largest real expressions are a few hundred
MAX_NODES = 5_000
MAX_DEPTH = 64
MAX_INT = 2**64
MAX_EXPONENT = 64
MAX_POWERS = 8

# What sympy.srepr writes for the expressions torch keeps, and the size functions torch passes to sympify.
FUNCTIONS = frozenset({
    "Symbol", "Dummy", "Integer", "Rational", "Float", "Add", "Mul", "Pow", "Mod", "Max", "Min", "Abs", "floor",
    "ceiling", "sign", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Equality", "Unequality", "StrictLessThan", "LessThan",
    "StrictGreaterThan", "GreaterThan", "And", "Or", "Not", "Xor", "ITE", "Piecewise", "ExprCondPair", "BooleanTrue",
    "BooleanFalse", "Infinity", "NegativeInfinity", "NaN", "Zero", "One", "NegativeOne", "Half", "ComplexInfinity",
    "IntInfinity", "NegativeIntInfinity", "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "Tuple",
    "FloorDiv", "ModularIndexing", "Where", "PythonMod", "CleanDiv", "CeilToInt", "FloorToInt", "CeilDiv", "LShift",
    "RShift", "PowByNatural", "FloatPow", "FloatTrueDiv", "IntTrueDiv", "IsNonOverlappingAndDenseIndicator",
    "TruncToFloat", "TruncToInt", "RoundToInt", "RoundDecimal", "ToFloat", "Identity",
})
FUNCTION_PATTERNS = (re.compile(r"^OpaqueUnaryFn_[a-z0-9_]+$"), re.compile(r"^BitwiseFn_bitwise_[a-z]+$"))
POWERS = frozenset({"Pow", "PowByNatural", "FloatPow", "LShift", "RShift"})
CONSTANT_NAMES = frozenset({"True", "False", "true", "false", "oo", "zoo", "nan", "int_oo"})
SYMBOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
BARE_SYMBOL = re.compile(r"^[a-z]{1,4}[0-9]{1,9}$")  # s0, u12, ps3: what str() of a torch size symbol looks like
KEYWORDS = frozenset({"integer", "positive", "nonnegative", "negative", "nonpositive", "real", "finite", "infinite",
                      "commutative", "zero", "even", "odd", "extended_real", "precision", "evaluate", "rational"})
NUMBER_TEXT = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
BIN_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
CMP_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class UnsafeExpression(ValueError):
    """The expression is outside the grammar torch writes; `str()` says what was found."""


def check_expression(text: str) -> None:
    """Raise `UnsafeExpression` unless `text` is a size expression of the kind torch writes."""
    if not isinstance(text, str):
        raise UnsafeExpression(f"an expression must be text, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise UnsafeExpression(f"an expression is {len(text):,} characters long (at most {MAX_LENGTH:,})")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise UnsafeExpression(f"not a size expression ({type(e).__name__})") from None
    _Checker().check(tree.body)


def _is_function(name: str) -> bool:
    return name in FUNCTIONS or any(p.match(name) for p in FUNCTION_PATTERNS)


class _Checker:
    def __init__(self) -> None:
        self.nodes = 0
        self.powers = 0

    def check(self, root: ast.expr) -> None:
        stack: list[tuple[ast.AST, int]] = [(root, 0)]
        while stack:
            node, depth = stack.pop()
            self.nodes += 1
            if self.nodes > MAX_NODES or depth > MAX_DEPTH:
                raise UnsafeExpression("an expression is too large or too deeply nested")
            stack.extend((child, depth + 1) for child in self._children(node))

    def _children(self, node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.Constant):
            self._constant(node.value)
            return []
        if isinstance(node, ast.Name):
            if node.id in CONSTANT_NAMES or BARE_SYMBOL.match(node.id):
                return []
            raise UnsafeExpression(f"the name '{node.id[:40]}' is not a size symbol")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
            return [node.operand]
        if isinstance(node, ast.BinOp) and isinstance(node.op, BIN_OPS):
            if isinstance(node.op, ast.Pow):
                self._power(node.right)
            return [node.left, node.right]
        if isinstance(node, ast.BoolOp):
            return list(node.values)
        if isinstance(node, ast.Compare) and all(isinstance(op, CMP_OPS) for op in node.ops):
            return [node.left, *node.comparators]
        if isinstance(node, ast.Call):
            return self._call(node)
        raise UnsafeExpression(f"'{type(node).__name__}' is not allowed in a size expression")

    def _call(self, node: ast.Call) -> list[ast.AST]:
        if not isinstance(node.func, ast.Name) or not _is_function(node.func.id):
            what = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise UnsafeExpression(f"a call of '{what[:40]}', which is not a size function")
        name = node.func.id
        for kw in node.keywords:
            if kw.arg not in KEYWORDS or not isinstance(kw.value, ast.Constant) or isinstance(kw.value.value, str):
                raise UnsafeExpression(f"the argument '{kw.arg}' of {name} is not allowed")
            self._constant(kw.value.value)
        args: list[ast.AST] = list(node.args)
        if name in ("Symbol", "Dummy"):
            if not args or not isinstance(args[0], ast.Constant) or not isinstance(args[0].value, str) \
                    or not SYMBOL_NAME.match(args[0].value) or len(args) > 1:
                raise UnsafeExpression(f"{name} needs one plain name")
            return []
        if name == "Float" and args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            if not NUMBER_TEXT.match(args[0].value):
                raise UnsafeExpression("Float of text that is not a number")
            args = args[1:]
        if name in POWERS and len(args) == 2:
            self._power(args[1])
        return args

    def _power(self, exponent: ast.AST) -> None:
        self.powers += 1
        if self.powers > MAX_POWERS:
            raise UnsafeExpression("an expression has too many powers")
        value = exponent.operand if isinstance(exponent, ast.UnaryOp) else exponent
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "Integer" \
                and value.args:
            value = value.args[0]
        if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) \
                and abs(value.value) > MAX_EXPONENT:
            raise UnsafeExpression(f"an exponent of {value.value}, more than {MAX_EXPONENT}")

    @staticmethod
    def _constant(value: object) -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, int):
            if abs(value) > MAX_INT:
                raise UnsafeExpression("an integer too large for a size")
            return
        if isinstance(value, float):
            return
        if isinstance(value, str):
            raise UnsafeExpression("text where a size belongs")
        raise UnsafeExpression(f"a {type(value).__name__} constant")
