"""A graph as readable Python, the way torch's `GraphModule.print_readable()` writes it, built from the archive alone.

People who know torch.export read programs in this form (`linear: "f32[s77, 3]" = torch.ops.aten.linear.default(x,
p_lin_weight, p_lin_bias)`), so the code panel shows exactly that, with each HOP subgraph as a nested class. Unlike
torch we also keep which line shows which node, so the code panel and the graph can follow each other's selection.

Differences from torch's text, on purpose: no `# File:` comments and no `x = None` clean-ups (the details panel shows
stack traces), and a `forward` with several inputs lists one input per line, so each placeholder has a line of its own.
A multi-output node (topk, cond) is one node in the archive; like torch we print it once, then one `name = node[i]`
line per output, and all those lines belong to that node.
"""
from __future__ import annotations

import re
from typing import Any

import msgspec

from pt2_viewer.core.model.program import Graph, Node, NodeOp, Program, Ref, Value

INDENT = "    "

# `_operator` targets torch prints as Python operators: `ge: "Sym(u0 >= 0)" = sym_size_int_1 >= 0`.
_BINARY = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "ge": ">=", "gt": ">", "le": "<=", "lt": "<", "eq": "==", "ne": "!=", "and_": "&", "or_": "|",
           "xor": "^", "lshift": "<<", "rshift": ">>", "matmul": "@"}
_UNARY = {"neg": "-", "pos": "+", "invert": "~", "not_": "not "}
# Strings the reader made from enum-like arguments (dtype, memory format, layout, device): printed bare, not quoted.
_BARE_STRING = re.compile(r"^torch\.[a-z0-9_]+$")
_DEVICE = re.compile(r"^device\('(?P<type>[a-z_]+)(:(?P<index>\d+))?'\)$")


class ReadableCode(msgspec.Struct):
    """The program as Python text; line numbers are 0-based indexes into `text.splitlines()`.

    `line_of_node` maps each node of the graph shown to its first line. `node_of_line` maps every line that belongs
    to a node (the node's own line, its `getitem` lines, a placeholder's parameter line) to the node's name; lines
    inside a nested subgraph class map to the subgraph's `get_attr` node in the graph shown.
    """

    text: str
    line_of_node: dict[str, int] = msgspec.field(default_factory=dict)
    node_of_line: dict[int, str] = msgspec.field(default_factory=dict)


def readable_code(source: Graph | Program) -> ReadableCode:
    """`print_readable`-style Python for a program's top graph, or for one graph (a HOP subgraph), nested classes
    included."""
    graph = source.graph if isinstance(source, Program) else source
    writer = _Writer()
    writer.graph_class(graph, depth=0, owner=None)
    return ReadableCode("\n".join(writer.lines), writer.line_of_node, writer.node_of_line)


def type_text(value: Value | None) -> str:
    """A value's type as torch writes it: `f32[s77, 3]`, `Sym(u0 >= 0)`; "" when torch writes none."""
    if value is None:
        return ""
    if value.meta is not None:
        return value.meta.short
    if value.expr is not None and value.kind.startswith("sym_"):
        return f"Sym({value.expr.text})"
    return ""


def annotation(value: Value | None) -> str:
    """The quoted type torch writes after a name: `"f32[s77, 3]"`; "" when torch writes none."""
    text = type_text(value)
    return f'"{text}"' if text else ""


def literal(value: Any) -> str:
    """An argument as Python source: refs by name, enum-like strings bare, other literals as `repr` writes them."""
    if isinstance(value, Ref):
        return value.value
    if isinstance(value, Graph):
        return value.name
    if isinstance(value, str):
        device = _DEVICE.match(value)
        if device:
            index = f", index={device['index']}" if device["index"] else ""
            return f"device(type='{device['type']}'{index})"
        return value if _BARE_STRING.match(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def call_text(node: Node) -> str:
    """The right-hand side torch prints for a call_function node."""
    args = [literal(a.value) for a in node.inputs if a.kind != "keyword"]
    kwargs = [f"{a.name} = {literal(a.value)}" for a in node.inputs if a.kind == "keyword"]
    if node.target.startswith(("_operator.", "operator.")) and not kwargs:
        op = node.target.rsplit(".", 1)[-1]
        if op in _BINARY and len(args) == 2:
            return f"{args[0]} {_BINARY[op]} {args[1]}"
        if op in _UNARY and len(args) == 1:
            return f"{_UNARY[op]}{args[0]}"
    return f"{node.target}({', '.join(args + kwargs)})"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.line_of_node: dict[str, int] = {}
        self.node_of_line: dict[int, str] = {}

    def emit(self, depth: int, text: str, node: str | None) -> None:
        """Add one line; `node` is the node of the graph shown that the line belongs to."""
        if node is not None:
            self.node_of_line[len(self.lines)] = node
            self.line_of_node.setdefault(node, len(self.lines))
        self.lines.append(INDENT * depth + text)

    def graph_class(self, graph: Graph, depth: int, owner: str | None) -> None:
        """A graph as `class NAME(torch.nn.Module):`. `owner` is None for the graph shown, else the node of the graph
        shown that every line of this nested class belongs to."""
        self.emit(depth, f"class {graph.name or 'GraphModule'}(torch.nn.Module):", owner)
        self.forward(graph, depth + 1, owner)
        for node in graph.nodes:
            for sub in node.subgraphs:
                self.emit(depth + 1, "", None)
                self.graph_class(sub, depth + 1, owner if owner is not None else sub.name)

    def forward(self, graph: Graph, depth: int, owner: str | None) -> None:
        placeholders = [n for n in graph.nodes if n.op is NodeOp.PLACEHOLDER]
        params = [_param(graph, n) for n in placeholders]
        if len(placeholders) <= 1:
            first = placeholders[0].name if placeholders else None
            self.emit(depth, f"def forward({', '.join(['self', *params])}):", owner or first)
        else:
            self.emit(depth, "def forward(", owner)
            self.emit(depth + 1, "self,", owner)
            for n, p in zip(placeholders, params):
                self.emit(depth + 1, f"{p},", owner or n.name)
            self.emit(depth, "):", owner)
        for node in graph.nodes:
            if node.op is not NodeOp.PLACEHOLDER:
                self.statement(graph, node, depth + 1, owner or node.name)

    def statement(self, graph: Graph, node: Node, depth: int, owner: str) -> None:
        if node.op is NodeOp.OUTPUT:
            outs = [literal(v) for v in (node.inputs[0].value if node.inputs else [])]
            self.emit(depth, f"return ({outs[0]},)" if len(outs) == 1 else f"return ({', '.join(outs)})", owner)
            return
        if node.op is NodeOp.GET_ATTR:
            self.emit(depth, f"{node.name} = self.{node.target}", owner)
            return
        outputs = node.outputs
        single = len(outputs) == 1 and outputs[0] is not None and node.namespace != "higher_order"
        if single:
            out = outputs[0] or node.name
            ann = annotation(graph.values.get(out))
            self.emit(depth, f"{out}{': ' + ann if ann else ''} = {call_text(node)}", owner)
            return
        self.emit(depth, f"{node.name} = {call_text(node)}", owner)
        for i, item in enumerate(outputs):
            if item is None:
                continue
            ann = annotation(graph.values.get(item))
            self.emit(depth, f"{item}{': ' + ann if ann else ''} = {node.name}[{i}]", owner)


def _param(graph: Graph, node: Node) -> str:
    ann = annotation(graph.values.get(node.outputs[0] if node.outputs and node.outputs[0] else node.name))
    return f"{node.name}: {ann}" if ann else node.name
