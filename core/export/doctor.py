"""The export doctor: every problem of one export call in one pass, with the fix the app can apply.

A script's export stops at its first failure; the user fixes it, re-runs, and meets the next. torch's
`torch.export.draft_export` exports anyway and reports every problem it papered over (data-dependent errors
deduplicated with their count, guards that broke a dynamic_shapes spec, missing or wrong fake kernels). The worker
runs it beside the real export (core/export/job.py, request `"diagnose": true`); this module turns torch's report into
`Problem`s: the user's own line, torch's suggestion, and (`propose`, core/export/fixes/) candidate fixes to the user's
own files, in the user's names, which core/export/fixes/verify.py proves by exporting a patched copy again; only a
verified fix gets a `diff`, the others go under `tried`, and `reason` says in words what the user must decide. Where
draft export is missing (older torch) or fails itself, `fallback` says so and lists the one problem the real export
met.

Nothing here imports torch: the job hands in torch's objects and this module only reads their attributes.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from pt2_viewer.core.export.failures import (
    CONSTRAINT_VIOLATION,
    DATA_DEPENDENT_GUARD,
    GRAPH_BREAK,
    SPECIALIZED_VALUE,
    UNTRACEABLE_DATA,
    Failure,
    SourceLine,
    same_file,
    with_code,
)
from pt2_viewer.core.export.fixes import code_fixes, spec_fixes
from pt2_viewer.core.export.fixes.code_fixes import Candidates
from pt2_viewer.core.export.fixes.source import Script
from pt2_viewer.core.export.guards import GuardLog
from pt2_viewer.core.export.plain_words import requirement_sentence, source_text, user_words

DRAFT = "draft_export"
STRICT = "strict"  # the fallback: the real export's first failure only

# torch's FailureType names -> ours
KINDS = {"DATA_DEPENDENT_ERROR": "data_dependent_error", "GUARD_ADDED": "guard_added",
         "MISSING_FAKE_KERNEL": "missing_fake_kernel", "MISMATCHED_FAKE_KERNEL": "mismatched_fake_kernel"}
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
    diff: str = ""  # a unified diff against the user's files; only ever a verified one
    result: str = ""  # what torch's undecided guard was for the example inputs ("True"/"False"), when known
    symbols: dict[str, str] = field(default_factory=dict)  # torch's symbol -> the user's name for it
    reason: str = ""  # what the user must decide, in words, when no verified fix can be shown (or what it costs)
    narrows: str = ""  # what the verified fix makes the exported program reject; "" when nothing
    verified: bool = False  # `diff` was applied to a copy of the script and that call then exported
    resolved: bool | None = None  # after the re-export, this problem's own failure was gone (None: not known)
    tried: list[dict[str, Any]] = field(default_factory=list)  # fixes re-exported that still failed (verified false)


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
    guard = _GUARD_EXPR.search(failure.message)  # torch's own expression, before its words are made the user's
    problem = Problem(kind=failure.kind, count=1, message=user_words(failure.message), user_line=failure.user_line,
                      expr=guard.group(1) if guard else "",
                      suggestion="; ".join(failure.suggested_fixes_text) or failure.hint)
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
        names = _symbol_names(data, guards)
        problem = Problem(kind, int(data.get("occurrences") or 1),
                          f"could not decide `{user_words(expr, names)}` from the example inputs' shapes (it was "
                          f"{result} for these inputs, and export specialized to that)", line, expr,
                          "add torch._check(...) to the original code to assert this data-dependent assumption")
        problem.result, problem.symbols = result, names
        return problem
    if kind == "guard_added":
        sources = data.get("symbol_to_sources") or {}
        names = {str(k): source_text(str(v)) for k, v in sources.items()} if isinstance(sources, dict) else {}
        return Problem(kind, 1, f"export requires {user_words(str(data.get('expr', '')), names)}",
                       line, str(data.get("expr", "")),
                       "change dynamic_shapes, or use Dim.AUTO and let export infer it")
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
    return f"torch._check({code_fixes.check_text(expr, holds, names)})"


_DATA_DEPENDENT = ("data_dependent_error", DATA_DEPENDENT_GUARD)
CONVENTION = "convention"  # ExportCall.source of the worker's own export of the module-level `model` (report.py)
_GUARD_EXPR = re.compile(r"Could not guard on data-dependent expression (.+?) \(unhinted")


def propose(diagnosis: Diagnosis, script: str, call: Any) -> dict[int, Candidates]:
    """The fixes to try for each problem of a failed call (item index -> candidates, best first), in the user's
    names; each problem's `reason` says what the user must decide if none is verified. `call` is the ExportCall.

    An exported call needs no fix: its draft-export notes keep their words only. A constraint violation is listed
    as a problem of its own (torch's suggested fixes, as an edit of the user's dims or `dynamic_shapes` literal);
    the guards draft export added for it point to that fix."""
    failure: Failure | None = call.failure
    out: dict[int, Candidates] = {}
    if call.ok or failure is None:
        for p in diagnosis.items:
            p.message = user_words(p.message, p.symbols)
            p.reason = "The export succeeded: no change is needed; torch's draft export noted this while tracing."
        return out
    if failure.kind == CONSTRAINT_VIOLATION and not any(p.kind == CONSTRAINT_VIOLATION for p in diagnosis.items):
        diagnosis.items.insert(0, Problem(CONSTRAINT_VIOLATION, 1, failure.message, failure.user_line,
                                          suggestion="; ".join(failure.suggested_fixes_text) or failure.hint))
    parsed = Script.read(script)
    for i, p in enumerate(diagnosis.items):
        p.fix_kind, p.fix, p.diff = "", "", ""
        p.symbols = p.symbols or _symbol_names({}, call.guards)
        found = _candidates(p, parsed, script, call, failure)
        p.reason = found.reason
        p.message = user_words(found.message or p.message, p.symbols)
        if found.fixes:
            out[i] = found
    return out


def _branch_then_strict(parsed: Script, line: int, strict: Candidates) -> Candidates:
    """Strict export refused `if <tensor>:` (Dynamo's "data-dependent branching"): torch.cond keeps both branches;
    strict=False alone would only meet the same branch as a data-dependent guard, so it is tried last."""
    stmt = parsed.statement_at(line)
    if not isinstance(stmt, ast.If):
        return strict
    found = code_fixes.tensor_branch(parsed, stmt, stmt.test)
    found.fixes += strict.fixes
    found.message = (f"strict export cannot follow `if {parsed.segment(stmt.test)}`: which branch runs depends on "
                     "tensor data")
    return found


def _candidates(p: Problem, parsed: Script | None, script: str, call: Any, failure: Failure) -> Candidates:
    line = p.user_line.line if p.user_line is not None and same_file(p.user_line.file, script) else None
    call_line = call.line.line if call.line is not None and same_file(call.line.file, script) else None
    if p.kind in ("missing_fake_kernel",) or "no fake impl registered" in p.message:
        return code_fixes.fake_kernel(script, p.expr or p.message)
    if parsed is None:
        return Candidates(reason="the script could not be read back to build a patch.")
    if p.kind == "guard_added":
        return Candidates(reason=("export added this guard while tracing; the dynamic_shapes fix of this call "
                                  "covers it." if failure.kind == CONSTRAINT_VIOLATION else
                                  "export added this guard while tracing; the program requires it."))
    convention = getattr(call, "source", "") == CONVENTION
    if p.kind == CONSTRAINT_VIOLATION and (call_line is not None or convention):
        spec = spec_fixes.SpecJson(call.dynamic_shapes_spec, call.dynamic_shapes)
        found = spec_fixes.spec_fix(parsed, call_line or 0, failure.suggested_fixes_text, failure.fixes, call.inputs,
                                    convention, spec)
        found.message = requirement_sentence(failure.fixes, call.dynamic_shapes_spec) or found.message
        return found
    if p.kind == GRAPH_BREAK and (call_line is not None or convention):
        strict = code_fixes.strict_false(parsed, call_line or 0, convention)
        if line is not None and "data-dependent branching" in p.message.lower():
            return _branch_then_strict(parsed, line, strict)
        return strict
    if line is None:
        return Candidates(reason="torch names no line of the script for this problem, so no patch can be built.")
    if p.kind in _DATA_DEPENDENT and re.fullmatch(r"[uf]\d+", p.expr) and p.expr in p.symbols \
            and re.fullmatch(r"-?\d+", p.result):  # draft export's "could not decide u0 (it was 3)": a needed int
        return code_fixes.specialized_int(parsed, line, p.symbols, known=(p.symbols[p.expr], int(p.result)))
    if p.kind in _DATA_DEPENDENT:
        expr = p.expr
        if not expr:
            m = _GUARD_EXPR.search(p.message)
            expr = m.group(1) if m else ""
        return code_fixes.data_dependent(parsed, line, expr, p.result or None, p.symbols)
    if p.kind == UNTRACEABLE_DATA:
        return code_fixes.data_write(parsed, line, str(call.model))
    if p.kind == SPECIALIZED_VALUE:
        return code_fixes.specialized_int(parsed, line, p.symbols, getattr(call, "item_values", None))
    if p.kind == "mismatched_fake_kernel":
        return Candidates(reason="the op's fake kernel must return outputs of the real kernel's shapes and dtypes.")
    return Candidates(reason="the doctor knows no safe change for this failure; read torch's message.")
