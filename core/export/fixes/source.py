"""The user's script read with `ast`: the statement, call, function and assignments at a line, and source text.

Every fix is built from what the script says at a line torch pointed to, so that it edits the user's own code in
the user's own names; when the code is not there (a spec built by a comprehension, a line torch did not name), the
helpers return None and the fixer says so in words instead of inventing a line.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Script:
    """One Python file of the user's, parsed."""

    path: str
    text: str
    lines: list[str]
    tree: ast.Module

    @classmethod
    def read(cls, path: str) -> Script | None:
        try:
            text = Path(path).read_text(encoding="utf-8")
            return cls(path, text, text.splitlines(), ast.parse(text))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            return None

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or ""

    def line(self, n: int) -> str:
        return self.lines[n - 1] if 1 <= n <= len(self.lines) else ""

    def statement_at(self, line: int) -> ast.stmt | None:
        """The innermost statement that starts at `line` (else the innermost one containing it)."""
        best: ast.stmt | None = None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
                if best is None or node.lineno >= best.lineno and (node.end_lineno or 0) <= (best.end_lineno or 0):
                    best = node
        return best

    def parent_map(self) -> dict[ast.AST, ast.AST]:
        parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        return parents

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function (or module) whose body holds `node`."""
        parents = self.parent_map()
        cur = parents.get(node)
        while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            cur = parents.get(cur)
        return cur or self.tree

    def export_call_at(self, line: int) -> ast.Call | None:
        """The `export(...)`/`torch.export.export(...)` call written at `line` (it may span several lines)."""
        hits = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and _called_name(n.func) in (
            "export", "draft_export") and n.lineno <= line <= (n.end_lineno or n.lineno)]
        return min(hits, key=lambda n: (n.end_lineno or 0) - n.lineno) if hits else None

    def assignments_before(self, name: str, line: int, scope: ast.AST) -> list[ast.stmt]:
        """Statements of `scope` (not nested functions) before `line` that bind `name`, in order."""
        out = []
        for node in _own_statements(scope):
            if node.lineno < line and name in bound_names(node):
                out.append(node)
        return sorted(out, key=lambda n: n.lineno)

    def class_named(self, name: str, before: int) -> ast.ClassDef | None:
        """The last `class NAME` defined before line `before` (scripts redefine classes, as the tutorial does)."""
        found = [n for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef) and n.name == name
                 and n.lineno < before]
        return max(found, key=lambda n: n.lineno) if found else None

    def subscript_assignments_before(self, name: str, key: str, line: int, scope: ast.AST) -> list[ast.Assign]:
        """`name["key"] = ...` statements of `scope` before `line`."""
        out = []
        for node in _own_statements(scope):
            if isinstance(node, ast.Assign) and node.lineno < line:
                for t in node.targets:
                    if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                            and isinstance(t.slice, ast.Constant) and t.slice.value == key):
                        out.append(node)
        return out


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _own_statements(scope: ast.AST) -> list[ast.stmt]:
    """Every statement in `scope`'s body, nested blocks included, but not inside nested functions or classes."""
    out: list[ast.stmt] = []
    todo = list(getattr(scope, "body", []))
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for fname in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, fname, []) or [])
    return out


def bound_names(node: ast.stmt) -> set[str]:
    """Names a statement assigns (plain names, tuple unpacking)."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    names: set[str] = set()
    todo = list(targets)
    while todo:  # plain names and unpacking only: `spec["x"] = ...` does not bind `spec`
        t = todo.pop()
        if isinstance(t, ast.Name):
            names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            todo.extend(t.elts)
        elif isinstance(t, ast.Starred):
            todo.append(t.value)
    return names
