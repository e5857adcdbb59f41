"""The export doctor: every problem of one export call in one pass, with the fix the app can apply.

A script's export stops at its first failure; the user fixes it, re-runs, and meets the next. torch's
`torch.export.draft_export` exports anyway and reports every problem it papered over (data-dependent errors
deduplicated with their count, guards that broke a dynamic_shapes spec, missing or wrong fake kernels). The worker
runs it beside the real export (core/export/job.py, request `"diagnose": true`); this module turns torch's report into
`Problem`s: the user's own line, torch's suggestion, and a concrete fix: a `torch._check(...)` line to add before
that line, or a corrected `dynamic_shapes`, each shown as a diff. Where draft export is missing (older torch) or
fails itself, `fallback` says so and lists the one problem the real export met, as before.

Nothing here imports torch: the job hands in torch's objects and this module only reads their attributes.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.export.failures import (
    CONSTRAINT_VIOLATION,
    Failure,
    SourceLine,
    apply_changes,
    same_file,
    with_code,
)
from pt2_viewer.core.export.guards import GuardLog

DRAFT = "draft_export"
STRICT = "strict"  # the fallback: the real export's first failure only

# torch's FailureType names -> ours
KINDS = {"DATA_DEPENDENT_ERROR": "data_dependent_error", "GUARD_ADDED": "guard_added",
         "MISSING_FAKE_KERNEL": "missing_fake_kernel", "MISMATCHED_FAKE_KERNEL": "mismatched_fake_kernel"}
_FLIP = {">=": "<", "<=": ">", ">": "<=", "<": ">=", "==": "!=", "!=": "=="}
_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*)\s*=[^=]")


@dataclass
class Problem:
    """One problem of an export call. `fix_kind` says what `fix` is: "torch_check" (a line to add before
    `user_line`), "dynamic_shapes" (the corrected spec, as Python or the JSON spec) or "" (nothing to apply)."""

    kind: str
    count: int
    message: str
    user_line: SourceLine | None = None
    expr: str = ""
    suggestion: str = ""
    fix_kind: str = ""
    fix: str = ""
    diff: str = ""


@dataclass
class Diagnosis:
    """What the doctor found for one call; `pt2` is the draft program, saved when the real export failed."""

    method: str  # DRAFT or STRICT
    items: list[Problem] = field(default_factory=list)
    note: str = ""
    pt2: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Diagnosis:
        items = []
        for p in d.get("items", []):
            p = dict(p)
            line = p.pop("user_line", None)
            items.append(Problem(**p, user_line=SourceLine(**line) if line else None))
        return cls(method=d["method"], items=items, note=d.get("note", ""), pt2=d.get("pt2"))


def from_draft(report: Any, script: str, guards: GuardLog, dynamic_shapes: str | None,
               files: dict[Any, str] | None = None) -> Diagnosis:
    """Problems from torch's DraftExportReport (`ep._report`): deduplicated by kind, line and expression. `files`
    adds file ids torch interned before this export (the report lists only the names new to its own trace)."""
    files = {**(files or {}), **dict(getattr(report, "str_to_filename", {}) or {})}
    seen: dict[tuple[str, str, int, str], Problem] = {}
    for failure in getattr(report, "failures", []) or []:
        kind = KINDS.get(str(getattr(failure, "failure_type", "")), str(getattr(failure, "failure_type", "other")))
        data = dict(getattr(failure, "data", {}) or {})
        line = _user_line(data.get("user_stack") or [], files, script)
        problem = _problem(kind, data, line, guards, script, dynamic_shapes)
        key = (kind, line.file if line else "", line.line if line else 0, problem.expr)
        if key in seen:
            seen[key].count += problem.count
        else:
            seen[key] = problem
    items = list(seen.values())
    note = "No problems: the export is sound as it stands." if not items else ""
    return Diagnosis(DRAFT, items, note)


def fallback(reason: str, failure: Failure | None, spec: dict[str, Any] | None) -> Diagnosis:
    """torch's draft export is missing or failed: say so, and list the real export's first problem (if any)."""
    note = (f"torch's draft export could not diagnose this call ({reason}); only the first problem is listed, from "
            "the export itself: fix it and diagnose again.")
    if failure is None:
        return Diagnosis(STRICT, [], f"torch's draft export could not diagnose this call ({reason}); the export "
                         "itself succeeded, so there is no problem to list.")
    problem = Problem(kind=failure.kind, count=1, message=failure.message, user_line=failure.user_line,
                      suggestion="; ".join(failure.suggested_fixes_text) or failure.hint)
    if failure.kind == CONSTRAINT_VIOLATION and failure.fixes and spec is not None:
        try:
            fixed = apply_changes(spec, failure.fixes)
        except ValueError:
            fixed = None
        if fixed is not None:
            problem.fix_kind, problem.fix = "dynamic_shapes", json.dumps(fixed)
            problem.diff = _text_diff(json.dumps(spec, indent=1), json.dumps(fixed, indent=1), "dynamic_shapes")
    return Diagnosis(STRICT, [problem], note)


def _user_line(stack: list[dict[str, Any]], files: dict[Any, str], script: str) -> SourceLine | None:
    """The innermost frame of torch's user stack that is in the script itself."""
    for frame in reversed(stack):
        path = files.get(frame.get("filename"))
        if path and same_file(path, script):
            return with_code(SourceLine(path, int(frame.get("line") or 0), str(frame.get("name") or "")))
    return None


def _problem(kind: str, data: dict[str, Any], line: SourceLine | None, guards: GuardLog, script: str,
             dynamic_shapes: str | None) -> Problem:
    if kind == "data_dependent_error":
        expr, result = str(data.get("expr", "")), str(data.get("result", ""))
        problem = Problem(kind, int(data.get("occurrences") or 1),
                          f"could not decide `{expr}` from the example inputs' shapes (it was {result} for these "
                          "inputs, and export specialized to that)", line, expr,
                          "add torch._check(...) to the original code to assert this data-dependent assumption")
        names = _symbol_names(data, guards)
        if line is not None and result in ("True", "False"):
            problem.fix_kind, problem.fix = "torch_check", check_line(expr, result == "True", names)
            problem.diff = insert_diff(script, line, problem.fix)
        return problem
    if kind == "guard_added":
        new = str(data.get("new_dynamic_shapes", ""))
        problem = Problem(kind, 1, f"a guard `{data.get('expr', '')}` was added where {data.get('symbol_to_sources')}",
                          line, str(data.get("expr", "")),
                          "change dynamic_shapes as below, or use Dim.AUTO and let export infer it")
        if new:
            problem.fix_kind, problem.fix = "dynamic_shapes", new
            problem.diff = _text_diff(f"dynamic_shapes = {dynamic_shapes}", f"dynamic_shapes = {new}",
                                      "dynamic_shapes")
        return problem
    op = str(data.get("op", ""))
    if kind == "missing_fake_kernel":
        return Problem(kind, 1, f"torch.ops.{op} has no fake kernel", line, op,
                       f"register one with @torch.library.register_fake(\"{op}\")")
    if kind == "mismatched_fake_kernel":
        return Problem(kind, 1, f"torch.ops.{op}'s fake kernel disagrees with the real one: {data.get('reason')}",
                       line, op, "fix the fake kernel so its output shapes match the real kernel's")
    return Problem(kind, 1, json.dumps(data, default=str)[:500], line)


def _symbol_names(data: dict[str, Any], guards: GuardLog) -> dict[str, str]:
    """Unbacked symbol -> the script variable holding it: from torch's frame locals (non-strict), else from the
    line that made the symbol (`a = x.item()`), which the guard log recorded."""
    names: dict[str, str] = {}
    for var, value in ((data.get("frame_locals") or {}).get("locals") or {}).items():
        values = value if isinstance(value, list) else [value]
        if len(values) == 1 and re.fullmatch(r"[uf]\d+", str(values[0])):
            names.setdefault(str(values[0]), var)
    for symbol in guards.symbols:
        if symbol.name not in names and symbol.user_line is not None:
            m = _ASSIGNED.match(symbol.user_line.code or "")
            if m:
                names[symbol.name] = m.group(1)
    return names


def check_line(expr: str, holds: bool, names: dict[str, str]) -> str:
    """`torch._check(...)` asserting `expr` (or its negation), with symbols replaced by the user's variable names:
    `((u0//2)) >= 5`, True, {u0: a} -> `torch._check(a // 2 >= 5)`; `Eq(u0, 4)`, False -> `torch._check(u0 != 4)`."""
    text = re.sub(r"\b([uf]\d+)\b", lambda m: names.get(m.group(1), m.group(1)), expr)
    text = re.sub(r"\(\(([^()]*)\)\)", r"(\1)", text)
    text = re.sub(r"^\(([^()]*)\)(?=\s*(?:[<>=!]=?))", r"\1", text.strip())
    text = re.sub(r"(\w)//(\w)", r"\1 // \2", text)
    eq = re.fullmatch(r"(Eq|Ne)\(([^(),]+), ([^(),]+)\)", text)  # sympy's spelling of == and !=
    if eq:
        text = f"{eq.group(2)} {'==' if eq.group(1) == 'Eq' else '!='} {eq.group(3)}"
    if holds:
        return f"torch._check({text})"
    m = re.fullmatch(r"(.+?)\s*(>=|<=|==|!=|>|<)\s*(.+)", text)
    if m:
        return f"torch._check({m.group(1)} {_FLIP[m.group(2)]} {m.group(3)})"
    return f"torch._check(torch.sym_not({text}))"


def insert_diff(script: str, line: SourceLine, code: str) -> str:
    """A unified diff adding `code` before `line` in the script, at that line's indentation."""
    try:
        lines = Path(script).read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return ""
    if not 1 <= line.line <= len(lines):
        return ""
    target = lines[line.line - 1]
    indent = target[:len(target) - len(target.lstrip())]
    new = [*lines[:line.line - 1], f"{indent}{code}\n", *lines[line.line - 1:]]
    name = Path(script).name
    return "".join(difflib.unified_diff(lines, new, f"a/{name}", f"b/{name}", n=2))


def _text_diff(old: str, new: str, name: str) -> str:
    a, b = (old.rstrip("\n") + "\n").splitlines(keepends=True), (new.rstrip("\n") + "\n").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{name}", f"b/{name}", n=3))
