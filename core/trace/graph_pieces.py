"""print_readable's text parsed with `ast` a piece at a time: each class, each `forward`'s signature, and its body in
runs of twenty lines, each run's trees read and freed before the next is parsed.

Why: `ast.parse` of a 10,000-node graph's text (1.7 MB) makes some 100,000 tree objects at once, and the cyclic
collector walks them again and again while they live: the same parse takes a third of the time in pieces (0.06 s
against 0.23 s of CPU, measured on bench/bench_trace_graph.py's graph). The runs are short because every tree alive
when the collector's middle generation is collected is moved to the oldest, and enough of those make it walk the
whole heap (runs of 100 lines: one such walk, 0.12 s, in every open of that graph; of 20: none).

The pieces are what Python's own grammar makes of the text: a class's members are the lines indented one step under
it, a body ends at the first line indented no deeper than its `def`, and a run of a body is cut where its lines
parse whole (a `return (` spread over lines is taken with the lines that close it). A text of any other layout is
parsed whole (`whole_class`); a body whose last run does not parse is reported by the caller. A line of a statement
whose shape was learnt from an earlier line (core/trace/graph_shapes.py) is not parsed: the reader reads it by
that shape.
"""
from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from pt2_viewer.core.trace.graph_shapes import LineShapes, Shaped

RUN_LINES = 20  # lines of a body parsed at once (module docstring)


@dataclass
class ForwardText:
    """A `forward`: its arguments, its first line, and its statements each with what its line numbers lack
    (`offset`: a piece's line numbers count from the piece)."""

    args: list[ast.arg]
    args_offset: int
    lineno: int
    statements: Iterator[tuple[ast.stmt | Shaped, int]]


@dataclass
class ClassText:
    """A graph's class: its name, its `forward`, the classes nested in it (subgraphs)."""

    name: str
    forward: ForwardText | None = None
    classes: list[ClassText] = field(default_factory=list)


def whole_class(cls: ast.ClassDef) -> ClassText:
    """A class of a text parsed whole."""
    out = ClassText(cls.name)
    for member in cls.body:
        if isinstance(member, ast.ClassDef):
            out.classes.append(whole_class(member))
        elif isinstance(member, ast.FunctionDef) and member.name == "forward" and out.forward is None:
            args = member.args.posonlyargs + member.args.args + member.args.kwonlyargs
            out.forward = ForwardText(args, 0, member.lineno, ((s, 0) for s in member.body))
    return out


def class_in_pieces(lines: list[str], shapes: LineShapes | None = None) -> ClassText | None:
    """The first class of `lines` (prepared for `ast`: see core/trace/graph_text.py), its pieces parsed when read;
    None when the text is not laid out as print_readable lays it out (then it is parsed whole). `shapes`: the lines
    of a statement's shape seen before are read by it."""
    i = _next_code(lines, 0)
    if i >= len(lines) or _indent(lines[i]) or not lines[i].startswith("class "):
        return None
    found = _class(lines, i, 0, shapes)
    return found[0] if found else None


def _next_code(lines: list[str], i: int) -> int:
    while i < len(lines) and (not (text := lines[i].strip()) or text.startswith("#")):
        i += 1
    return i


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _class(lines: list[str], i: int, indent: int, shapes: LineShapes | None) -> tuple[ClassText, int] | None:
    header = lines[i].strip()
    if not header.endswith(":") or "(" not in header:
        return None
    out = ClassText(header[len("class "):].partition("(")[0].strip())
    j = _next_code(lines, i + 1)
    while j < len(lines) and _indent(lines[j]) > indent:
        text = lines[j].strip()
        if _indent(lines[j]) != indent + 4 or "\t" in lines[j][:indent + 4]:
            return None
        if text.startswith("class "):
            nested = _class(lines, j, indent + 4, shapes)
            if nested is None:
                return None
            out.classes.append(nested[0])
            j = nested[1]
        elif text.startswith("def "):
            found = _function(lines, j, indent + 4, shapes)
            if found is None:
                return None
            forward, j = found
            if text.startswith("def forward(") and out.forward is None:
                out.forward = forward
        else:
            return None
        j = _next_code(lines, j)
    return out, j


def _function(lines: list[str], i: int, indent: int, shapes: LineShapes | None) -> tuple[ForwardText, int] | None:
    """A `def` at line `i`: its signature parsed now, its body when read."""
    end = i
    if not lines[i].rstrip().endswith(":"):  # a signature over several lines ends with a line `):`
        end = next((k for k in range(i + 1, len(lines)) if lines[k].strip() == "):"), -1)
        if end < 0 or _indent(lines[end]) != indent:
            return None
    pad = " " * (indent + 4)
    try:
        tree = ast.parse("if 1:\n" + "\n".join(lines[i:end + 1]) + f"\n{pad}pass")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    function = tree.body[0].body[0] if isinstance(tree.body[0], ast.If) else None
    if not isinstance(function, ast.FunctionDef):
        return None
    body_end, deeper = end + 1, " " * (indent + 1)
    while body_end < len(lines):  # the body ends at its first code line indented no deeper than the `def`
        line = lines[body_end]
        if not line.startswith(deeper) and (text := line.strip()) and not text.startswith("#"):
            break
        body_end += 1
    args = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    offset = i - 1  # the piece's line 2 is line i + 1 of the text
    return ForwardText(args, offset, i + 1, _body(lines, end + 1, body_end, pad, shapes)), body_end


def _body(lines: list[str], start: int, stop: int, pad: str,
          shapes: LineShapes | None) -> Iterator[tuple[ast.stmt | Shaped, int]]:
    """The statements of lines `start` to `stop` (0-based, `stop` excluded), parsed a run at a time; a line of a
    shape learnt (core/trace/graph_shapes.py) is read by it, not parsed, and ends the run before it. A run that
    does not parse is taken with the lines after it, twice as many each time, up to the body's end; a body whose
    end does not parse raises SyntaxError. Blank and comment lines are passed over: the reader takes comments from
    the lines."""
    while start < stop:
        if not (text := lines[start].strip()) or text.startswith("#"):
            start += 1
            continue
        if shapes is not None and (shaped := shapes.match(lines[start], start + 1)) is not None:
            yield shaped, 0
            start += 1
            continue
        end, cut, hit = min(stop, start + RUN_LINES), None, None
        if shapes is not None:
            for k in range(start + 1, end):
                if (hit := shapes.match(lines[k], k + 1)) is not None:
                    end = cut = k
                    break
        while True:
            try:
                tree = ast.parse("if 1:\n" + "\n".join(lines[start:end]) + f"\n{pad}pass")
                break
            except SyntaxError:
                if end >= stop:
                    raise
                end = min(stop, start + 2 * (end - start))
        statements = tree.body[0].body if isinstance(tree.body[0], ast.If) else []
        del tree
        offset = start - 1
        for statement in itertools.islice(statements, len(statements) - 1):  # the last is the `pass` added
            if shapes is not None:
                shapes.learn(statement, lines[statement.lineno + offset - 1])
            yield statement, offset
        start = end
        if hit is not None and end == cut:  # the line that ended the run, read by its shape
            yield hit, 0
            start += 1
