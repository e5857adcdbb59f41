"""A graph of a torch.compile trace read from the Python text torch logged (`GraphModule.print_readable`), with
`ast` and never run: Dynamo's output graph, AOTAutograd's forward, backward, joint and inference graphs, Inductor's
post-grad graph.

The text is a class whose `forward` is the graph: each argument a placeholder (its annotation, `"f32[s0, 3][3, 1]cpu"`,
the value's dtype, shape, strides and device); each statement one node, `name: "ann" = target(args)`, with the
nodes it reads by name; `return (...)` the output. A nested class is a subgraph (a `cond`'s branch). What is not
code is read from the lines `ast` says hold no statement: the `# File: path:line in fn, code: ...` comment before a
run of nodes is their source line, and the comment after an argument (`# PlainAOTInput(idx=0)`) says which input of
the compiled function it is.

Targets are kept as torch spells them (`torch.conv2d`, `torch.ops.aten.convolution.default`,
`torch.nn.functional.relu`); a method call is `torch.Tensor.flatten`, an operator `operator.mul`, a subscript
`operator.getitem`. A `getitem` of a node that returns several values is folded into it as one of its outputs, as a
`.pt2` keeps a multi-output op (core/model/program.py).
"""
from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from keyword import iskeyword
from typing import Any

from pt2_viewer.core.model.program import MAX_TARGET_CHARS, Argument, Node, NodeOp, Ref, capped_text
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.graph_pieces import ClassText, ForwardText, class_in_pieces, whole_class
from pt2_viewer.core.trace.graph_shapes import BINARY, LineShapes, Shaped, Spec, dotted_name
from pt2_viewer.core.util.lazy import lazy

_UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not_", ast.Invert: "invert"}
_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_NAMED = {"inf": float("inf"), "nan": float("nan")}  # names an argument reads as the number they print
_MAX_LITERAL_CHARS = 200  # what an argument keeps of an expression it shows as text (`device(type='cpu')`)


@dataclass(frozen=True)
class SourceComment:
    """`# File: path:line in fn, code: text`, the comment print_readable writes before the nodes of one line."""

    file: str
    line: int
    function: str
    code: str

    @lazy
    def stack_trace(self) -> str:
        """As torch writes a node's `stack_trace` (core/model/metadata.py parses it); one string for the line's
        nodes."""
        return f'  File "{self.file}", line {self.line}, in {self.function}\n    {self.code}'


@dataclass
class TextGraph:
    """One graph read from its text: model nodes in order (placeholders first, the output last) and what the text
    says beside them."""

    name: str
    nodes: list[Node]
    annotations: dict[str, str] = field(default_factory=dict)  # value name -> `f32[2, 3][3, 1]cpu` / `Sym(s0)`
    sources: dict[str, SourceComment] = field(default_factory=dict)  # node name -> its source line
    input_notes: dict[str, str] = field(default_factory=dict)  # placeholder -> `PlainAOTInput(idx=0)`
    output_notes: list[str] = field(default_factory=list)  # per output, `GradAOTOutput(...)` where written
    subgraphs: dict[str, TextGraph] = field(default_factory=dict)  # nested class name -> its graph
    shaped: int = 0  # statements read by a shape learnt from an earlier line (core/trace/graph_shapes.py)


def read_source_comment(comment: str) -> SourceComment | None:
    """`# File: /a/b.py:12 in forward, code: x = f(y)` -> its parts (the function "" where torch did not name it);
    None for any other comment."""
    text = comment.lstrip("#").strip()
    if not text.startswith("File: "):
        return None
    where, _, code = text[len("File: "):].partition(", code: ")
    place, in_, function = where.rpartition(" in ")
    if not in_:  # torch before 2.4: `# File: /a/b.py:12, code: x = f(y)`
        place, function = where, ""
    file, _, line = place.rpartition(":")
    if not file or not line.isdigit():
        return None
    return SourceComment(file, int(line), function, code)


def parse_graph_text(text: str, what: str, in_pieces: bool = True) -> TextGraph:
    """The graph of print_readable's `text`; TraceError naming `what` when it is not such a graph. `in_pieces`:
    parsed a piece at a time where the text is laid out as print_readable lays it out (core/trace/graph_pieces.py),
    else whole."""
    lines = text.splitlines()
    aliases: dict[int, tuple[str, str]] = {}
    prepared = [_prepared(i, line, aliases) for i, line in enumerate(lines, start=1)]
    try:
        top = (class_in_pieces(prepared, LineShapes()) if in_pieces else None) or _whole(prepared, what)
        return _GraphReader(lines, what, aliases).read(top, "")
    except (SyntaxError, ValueError, MemoryError) as error:
        raise TraceError(f"{what}: not a graph's Python text ({type(error).__name__}: "
                         f"{str(error).splitlines()[0] if str(error) else 'unreadable'})") from None
    except RecursionError:
        raise TraceError(f"{what}: the graph's text nests too deeply to read") from None


def _whole(prepared: list[str], what: str) -> ClassText:
    top = next((s for s in ast.parse("\n".join(prepared)).body if isinstance(s, ast.ClassDef)), None)
    if top is None:
        raise TraceError(f"{what}: no `class GraphModule` in the text; it is not a graph print_readable wrote")
    return whole_class(top)


def _prepared(number: int, line: str, aliases: dict[int, tuple[str, str]]) -> str:
    """The line as `ast` is given it. Two kinds of statement, a third of a big graph's text, are taken out first,
    each only when the line is exactly that: `l_x_ = L_x_` (a name for a name: kept in `aliases` by line, and read
    as the parsed statement would be) and the `;  a = b = None` ending a node's line (freeing names: nothing to read).
    The line numbers stay."""
    stripped = line.strip()
    target, equals, source = stripped.partition(" = ")
    if equals and target.isidentifier() and source.isidentifier() and not iskeyword(target) and not iskeyword(source):
        aliases[number] = (target, source)
        return ""
    head, semicolon, tail = line.rpartition(";  ")
    if semicolon and tail.endswith(" = None") and all(map(str.isidentifier, tail[:-len(" = None")].split(" = "))):
        line = head
    return _valid_class_line(line) if "class " in line else line


def _valid_class_line(line: str) -> str:
    """print_readable names a graph's class after its function, which may be `<lambda>`: a name `ast` takes."""
    stripped = line.lstrip()
    if stripped.startswith("class ") and stripped.endswith(":") and "(" in stripped:
        name, _, rest = stripped[len("class "):].partition("(")
        if not name.isidentifier():
            return f"{line[:len(line) - len(stripped)]}class {''.join(c if c.isalnum() else '_' for c in name)}_({rest}"
    return line


class _GraphReader:
    """Reads one class (and its nested classes) into a TextGraph."""

    def __init__(self, lines: list[str], what: str, aliases: dict[int, tuple[str, str]]) -> None:
        self.lines = lines
        self.what = what
        self.aliases = aliases

    def read(self, cls: ClassText, name: str) -> TextGraph:
        if cls.forward is None:
            raise TraceError(f"{self.what}: class {cls.name} has no forward; it is not a graph print_readable wrote")
        graph = TextGraph(name, [])
        for sub in cls.classes:
            graph.subgraphs[sub.name] = _GraphReader(self.lines, self.what, self.aliases).read(sub, sub.name)
        _Statements(self, graph).read(cls.forward)
        return graph

    def between(self, first: int, last: int) -> list[str | tuple[str, str]]:
        """What lines `first` to `last` (1-based, both included) hold besides statements `ast` read: comments, and
        the `name = name` statements taken out before parsing (`_prepared`), in order."""
        out: list[str | tuple[str, str]] = []
        for number in range(max(first, 1), min(last, len(self.lines)) + 1):
            alias = self.aliases.get(number)
            if alias is not None:
                out.append(alias)
            elif (text := self.lines[number - 1].strip()).startswith("#"):
                out.append(text)
        return out

    def comment_after(self, node: ast.AST, offset: int) -> str:
        """The comment closing `node`'s line (`primals_1: "f32[4]",  # PlainAOTInput(idx=0)`), or ""; `offset`
        what the line numbers of the piece `node` was parsed in lack."""
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None or not 0 < end_line + offset <= len(self.lines):
            return ""
        line, at, stop = self.lines[end_line + offset - 1], end_col, end_col + 2000  # what a comment keeps
        while at < stop and at < len(line) and line[at] in " ,;":  # not copied: a one-line signature is long
            at += 1
        return line[at + 1:stop].strip() if line.startswith("#", at) and at < stop else ""


class _Statements:
    """The statements of one `forward`, read into nodes in order."""

    def __init__(self, reader: _GraphReader, graph: TextGraph) -> None:
        self.reader = reader
        self.graph = graph
        self.values: dict[str, str] = {}  # a name the text uses -> the value it stands for
        self.producer: dict[str, Node] = {}  # value -> the node that makes it
        self.names: set[str] = set()
        self.source: SourceComment | None = None
        self.pending: dict[str, tuple[str, Argument, Argument]] = {}  # `a += b`: a -> (op, a, b), named at its use
        self.multi: dict[str, Node] = {}  # the name of a node returning several values -> the node
        self.offset = 0  # what the line numbers of the statement being read lack (core/trace/graph_pieces.py)

    # -- the function ------------------------------------------------------------------------------------------
    def read(self, forward: ForwardText) -> None:
        statements = forward.statements
        first = next(statements, None)
        declared = first is not None and isinstance(first[0], ast.AnnAssign) and first[0].value is None
        args = forward.args
        for arg in args[1:] if args and args[0].arg == "self" else args:
            if arg.annotation is None and declared:
                continue  # the joint graph's `primals, tangents`: its placeholders are the annotated names below
            note = self.reader.comment_after(arg, forward.args_offset)
            self._placeholder(arg.arg, _annotation(arg.annotation), note)
        previous_end = forward.lineno  # an argument's line never starts with `#`: no comment is taken for one
        for statement, offset in itertools.chain([first] if first else [], statements):
            if isinstance(statement, ast.Pass):
                continue
            if statement.lineno + offset > previous_end + 1:  # lines between: comments, or aliases taken out
                for found in self.reader.between(previous_end + 1, statement.lineno + offset - 1):
                    if isinstance(found, str):
                        self._comment(found)
                    else:
                        self._assign(found[0], ast.Name(found[1]), None)
            previous_end = (statement.end_lineno or statement.lineno) + offset
            self.offset = offset
            self._statement(statement)

    def _comment(self, comment: str) -> None:
        if comment.startswith("# File:"):
            self.source = read_source_comment(comment)
        elif comment.startswith("# No stacktrace found"):
            self.source = None

    def _placeholder(self, name: str, annotation: str | None, note: str) -> None:
        node = Node(self._unique(name), NodeOp.PLACEHOLDER, name, outputs=(name,))
        self._add(node, name, annotation)
        if note:
            self.graph.input_notes[node.name] = note

    def _unique(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self.names:
            name, n = f"{wanted}_{n}", n + 1
        self.names.add(name)
        return name

    def _add(self, node: Node, value: str | None, annotation: str | None) -> None:
        self.graph.nodes.append(node)
        if value is not None:
            self.values[value] = value
            self.producer[value] = node
            if annotation:
                self.graph.annotations[value] = annotation
        if self.source is not None and node.op is NodeOp.CALL_FUNCTION:
            self.graph.sources[node.name] = self.source
            node.metadata["stack_trace"] = self.source.stack_trace

    # -- statements --------------------------------------------------------------------------------------------
    def _statement(self, s: ast.stmt | Shaped) -> None:
        if isinstance(s, Shaped):
            if not self._shaped(s):  # a name of the line is a value's method: read the line as `ast` parses it
                statement = ast.parse("if 1:\n" + s.line).body[0].body[0]  # type: ignore[attr-defined]
                self.offset = s.lineno - statement.lineno
                self._statement(statement)
            return
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
            if s.value is None:  # the joint graph's `primals_1: "f32[4]"  # PlainAOTInput(idx=0)`
                self._placeholder(s.target.id, _annotation(s.annotation), self.reader.comment_after(s, self.offset))
            else:
                self._assign(s.target.id, s.value, _annotation(s.annotation))
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            self._assign(s.targets[0].id, s.value, None)
        elif isinstance(s, ast.Assign):
            return  # `a = b = None` (freeing), the joint graph's `primals_1, ... = fx_pytree.tree_flatten_spec(...)`
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            op = BINARY.get(type(s.op), type(s.op).__name__.lower())
            self.pending[s.target.id] = (f"operator.i{op}", self._argument("", s.target), self._argument("", s.value))
        elif isinstance(s, ast.Return):
            self._output(s)
        elif isinstance(s, ast.Expr):
            self._assign(self._unique("call"), s.value, None)

    def _shaped(self, s: Shaped) -> bool:
        """A line of a shape learnt (core/trace/graph_shapes.py) read as `_assign` reads its statement; False where
        the line is not read as its shape's line was (it calls a method of a value)."""
        shape, names, values = s.shape, s.names, self.values
        if shape.method_of is not None and shape.method_of in values:
            return False
        args: list[Argument] = []
        for keyword, kind, spec in shape.args:
            if spec[0] == "name":  # most arguments: a value, read here as `_literal` reads a name
                name = names[spec[1]]
                value = values.get(name)
                args.append(Argument(keyword, Ref(value) if value is not None else _NAMED.get(name, name), kind))
            else:
                args.append(Argument(keyword, self._spec(spec, names), kind))
        self._node(names[0], shape.target, args, shape.annotation)
        self.graph.shaped += 1
        return True

    def _spec(self, spec: Spec, names: list[str]) -> Any:
        """An argument of a shape's line, as `_literal` reads it."""
        how, what = spec
        if how == "name":
            name = names[what]
            return Ref(self.values[name]) if name in self.values else _NAMED.get(name, name)
        if how == "list":
            return [self._spec(x, names) for x in what]
        return what

    def _assign(self, name: str, value: ast.expr, annotation: str | None) -> None:
        if isinstance(value, ast.Constant) and value.value is None:
            return  # `x = None`: a value freed
        if isinstance(value, ast.Name):
            pending = self.pending.pop(value.id, None)
            if pending is not None:  # `a += b;  result: "f32[..]" = a`: the in-place op's node is `result`
                op, left, right = pending
                self._node(name, op, [left, right], annotation)
                return
            if value.id in self.values and name not in self.values:  # `l_x_ = L_x_`: the placeholder's own name
                self.values[name] = self.values[value.id]
                if annotation and self.values[name] not in self.graph.annotations:
                    self.graph.annotations[self.values[name]] = annotation
                return
        if self._fold_getitem(name, value, annotation):
            return
        target, args, op = self._call(value)
        self._node(name, target, args, annotation, op)

    def _node(self, name: str, target: str, args: list[Argument], annotation: str | None,
              op: NodeOp = NodeOp.CALL_FUNCTION) -> None:
        node_name = self._unique(name)
        full = target if len(target) > MAX_TARGET_CHARS else None
        node = Node(node_name, op, capped_text(target, MAX_TARGET_CHARS), inputs=tuple(args), outputs=(name,),
                    full_target=full)
        self._add(node, name, annotation)

    def _fold_getitem(self, name: str, value: ast.expr, annotation: str | None) -> bool:
        """`getitem_1: "f32[4]" = convolution_backward[1]`, of a node that returns several values: that node's
        output 1, named `getitem_1`, as a `.pt2` has it."""
        if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)
                and isinstance(value.slice, ast.Constant) and type(value.slice.value) is int):
            return False
        held, index = value.value.id, value.slice.value
        if not 0 <= index < 1000 or name in self.values:
            return False
        node = self.multi.get(held)
        if node is None:  # its first getitem: a node of no annotation (a tuple) stops being a value of its own
            source = self.values.get(held)
            node = self.producer.get(source) if source is not None else None
            if node is None or node.op is not NodeOp.CALL_FUNCTION or source in self.graph.annotations \
                    or not self.graph.annotations or tuple(node.outputs) != (source,):  # no shapes: maybe a tensor
                return False
            self.multi[held] = node
            node.outputs = ()
            self.producer.pop(source or held, None)
            self.values.pop(held, None)
        outputs = [*node.outputs, *[None] * (index + 1 - len(node.outputs))]
        if outputs[index] is not None:
            return False
        outputs[index] = name
        node.outputs = tuple(outputs)  # a tuple of strings: the cyclic collector stops walking it
        self.values[name] = name
        self.producer[name] = node
        if annotation:
            self.graph.annotations[name] = annotation
        return True

    def _output(self, s: ast.Return) -> None:
        value = s.value
        if isinstance(value, ast.Call) and dotted_name(value.func) == "pytree.tree_unflatten" and value.args:
            value = value.args[0]  # the joint graph's `pytree.tree_unflatten([...], self._out_spec)`
        items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [] if value is None else [value]
        self.graph.output_notes = [self.reader.comment_after(item, self.offset) for item in items]
        refs = [self._literal(item) for item in items]
        node = Node(self._unique("output"), NodeOp.OUTPUT, "output", inputs=(Argument("", refs),))
        self._add(node, None, None)

    # -- expressions -------------------------------------------------------------------------------------------
    def _call(self, e: ast.expr) -> tuple[str, list[Argument], NodeOp]:
        """(target, arguments, op) of the expression a node computes."""
        if isinstance(e, ast.Call):
            args = [self._argument("", a) for a in e.args]
            args += [self._argument(k.arg or "", k.value, "keyword") for k in e.keywords]
            if isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Name) \
                    and e.func.value.id in self.values:  # `x.flatten(1)`: a method of a value
                return f"torch.Tensor.{e.func.attr}", [self._argument("", e.func.value), *args], NodeOp.CALL_FUNCTION
            dotted = dotted_name(e.func)
            if dotted is not None and dotted.startswith("self."):  # torch < 2.5: `self.L__self___fc(x)`, a module
                return dotted[len("self."):], args, NodeOp.CALL_FUNCTION
            if dotted is None:
                return capped_text(ast.unparse(e.func), MAX_TARGET_CHARS), args, NodeOp.CALL_FUNCTION
            return (dotted if "." in dotted else f"builtins.{dotted}"), args, NodeOp.CALL_FUNCTION
        if isinstance(e, ast.BinOp):
            op = BINARY.get(type(e.op), type(e.op).__name__.lower())
            return f"operator.{op}", [self._argument("", e.left), self._argument("", e.right)], NodeOp.CALL_FUNCTION
        if isinstance(e, ast.UnaryOp):
            return f"operator.{_UNARY.get(type(e.op), 'neg')}", [self._argument("", e.operand)], NodeOp.CALL_FUNCTION
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            op = _COMPARE.get(type(e.ops[0]), type(e.ops[0]).__name__.lower())
            return (f"operator.{op}", [self._argument("", e.left), self._argument("", e.comparators[0])],
                    NodeOp.CALL_FUNCTION)
        if isinstance(e, ast.Subscript):
            return ("operator.getitem", [self._argument("", e.value), self._argument("", e.slice)],
                    NodeOp.CALL_FUNCTION)
        dotted = dotted_name(e)
        if dotted is not None and dotted.startswith("self."):  # `_tensor_constant0 = self._tensor_constant0`
            return dotted[len("self."):], [], NodeOp.GET_ATTR
        return capped_text(ast.unparse(e), MAX_TARGET_CHARS), [], NodeOp.CALL_FUNCTION

    def _argument(self, name: str, e: ast.expr, kind: str = "positional") -> Argument:
        return Argument(name, self._literal(e), kind)

    def _literal(self, e: ast.expr) -> Any:
        """An argument as a Python literal, a value it reads as a `Ref`, anything else as its text."""
        if isinstance(e, ast.Name):
            if e.id in self.values:
                return Ref(self.values[e.id])
            return _NAMED.get(e.id, e.id)
        if isinstance(e, ast.Constant):
            return e.value if not isinstance(e.value, bytes) else repr(e.value)
        if isinstance(e, (ast.Tuple, ast.List)):
            return [self._literal(x) for x in e.elts]
        if isinstance(e, ast.Dict):
            return {str(self._literal(k)) if k is not None else "**": self._literal(v)
                    for k, v in zip(e.keys, e.values)}
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
                and isinstance(e.operand.value, (int, float)):
            return -e.operand.value
        return capped_text(ast.unparse(e), _MAX_LITERAL_CHARS)


def _annotation(e: ast.expr | None) -> str | None:
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None
