"""Candidate fixes to the user's `dynamic_shapes`: torch's "Suggested fixes" (`dy = dx`, `d1 = 4`,
`n = Dim('n', min=5, max=64)`) applied to the lines that define those dims, and a dimension the model specializes
made `Dim.STATIC` in the `dynamic_shapes` literal that marked it `Dim.AUTO`/`Dim.DYNAMIC`.

The spec is followed from the export call through plain assignments only (a name bound to a dict literal, or
`spec["x"] = (...)`); when the script builds it any other way, the reason says so instead of inventing a line.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.export.failures import SpecChange
from pt2_viewer.core.export.fixes.code_fixes import Candidates
from pt2_viewer.core.export.fixes.edits import Edit, Fix, indent_of
from pt2_viewer.core.export.fixes.source import Script

_POSITION = 3  # export(mod, args, kwargs, dynamic_shapes, ...)


@dataclass
class SpecSite:
    """Where a call's dynamic_shapes come from: the export call's argument, or (the module-level convention) the
    script's own `dynamic_shapes = ...` assignment. `line`: assignments before it count; `scope`: where to look."""

    spec: ast.expr | None
    line: int
    scope: ast.AST
    where: str  # how the spec is written, for a reason
    insert_at: int  # where a statement that changes the spec goes: before the export call's statement, or the end

    @classmethod
    def of_call(cls, script: Script, call_line: int, convention: bool) -> SpecSite | None:
        if convention:  # the worker exports `model` itself once the script has run: every module-level line counts
            end = len(script.lines) + 1
            name = ast.Name(id="dynamic_shapes", ctx=ast.Load(), lineno=end, col_offset=0)
            return cls(name, end, script.tree, "the module-level dynamic_shapes", end)
        call = script.export_call_at(call_line)
        if call is None:
            return None
        stmt = script.statement_at(call.lineno)
        arg = _spec_arg(call)
        return cls(arg, call.lineno, script.scope_of(stmt) if stmt is not None else script.tree,
                   script.segment(arg or call).splitlines()[0], stmt.lineno if stmt is not None else call.lineno)


def spec_fix(script: Script, call_line: int, fix_lines: list[str], changes: list[SpecChange],
             inputs: list[str], convention: bool = False, spec: SpecJson | None = None) -> Candidates:
    """One fix for all of a constraint violation's changes, or the reason no patch can make it. `convention`: the
    call is the worker's export of the script's module-level `model`/`dynamic_shapes`."""
    out = Candidates()
    site = SpecSite.of_call(script, call_line, convention)
    if site is None:
        out.reason = ("the export call is not written in the script; change dynamic_shapes as torch suggests: "
                      + "; ".join(fix_lines or [c.text for c in changes]))
        return out
    edits: list[Edit] = []
    narrows: list[str] = []
    missing: list[str] = []
    spans: dict[int, list[tuple[int, int, str]]] = {}
    named = [ln for ln in fix_lines if re.match(r"^\w+ = ", ln)]
    if named:
        edit = _named_dims(script, site, named, spans)
        if edit is None:
            missing += named
        else:
            edits += edit
            narrows += [_narrow_named(ln) for ln in named]
    for change in changes:
        if change.action != "make_static" or change.input is None or change.axis is None:
            continue
        element = _spec_element(script, site, change.input, change.axis, inputs)
        if element is None or element.lineno != element.end_lineno:
            missing.append(f"{change.input} dimension {change.axis} = {change.value}")
            continue
        seg = script.segment(element)
        static = re.sub(r"\.(AUTO|DYNAMIC)$", ".STATIC", seg) if re.search(r"\.(AUTO|DYNAMIC)$", seg) else str(
            change.value)
        spans.setdefault(element.lineno, []).append((element.col_offset, element.end_col_offset or 0, static))
        narrows.append(f"the exported program accepts only {change.input}.shape[{change.axis}] == {change.value}")
    for lineno, parts in spans.items():
        text = script.line(lineno)
        for start, end, new in sorted(set(parts), reverse=True):
            text = text[:start] + new + text[end:]
        edits.append(Edit(script.path, lineno, lineno, [text]))
    if missing:
        out.reason = (f"the dynamic_shapes spec ({site.where}) is built in a way no patch can follow; change it so "
                      "that: " + "; ".join(missing))
        assigned = _assigned_entries(script, site, changes, spec)
        if assigned is not None:
            out.fixes.append(assigned)
            out.reason = ""
        return out
    if not edits:
        out.reason = "torch suggested no change to dynamic_shapes that a patch can make."
        return out
    code = "\n".join(fix_lines) or "\n".join(e.new[0].strip() for e in edits)
    out.fixes.append(Fix("dynamic_shapes", code, edits, "change dynamic_shapes as torch suggests",
                         "; ".join(n for n in narrows if n)))
    return out


@dataclass
class SpecJson:
    """The call's dynamic_shapes as core/export/dynamic_spec.py's JSON, and how the script passed it (its repr)."""

    json: dict[str, Any] | None
    text: str | None


def _assigned_entries(script: Script, site: SpecSite, changes: list[SpecChange], spec: SpecJson | None) -> Fix | None:
    """A spec the script builds by code (a comprehension, a loop) cannot be edited where it is written; statements
    after it can set the entries torch's changes name: `shapes["b"][0] = shapes["a"][0]`. None when the spec is not
    passed by name or its layout is unknown. Verification tells whether the entries can be assigned (a tuple cannot)."""
    if not isinstance(site.spec, ast.Name) or spec is None or spec.json is None or not spec.text:
        return None
    var = site.spec.id
    inputs = list((spec.json.get("inputs") or {}).keys())
    keyed = spec.text.lstrip().startswith("{")

    def entry(use: tuple[str, int]) -> str:
        name, axis = use
        key = repr(name) if keyed else str(inputs.index(name)) if name in inputs else None
        return f"{var}[{key}][{axis}]".replace("'", '"')

    uses = _uses(spec.json)
    lines: list[str] = []
    for c in changes:
        if c.action == "relate" and c.dim and c.root and c.root in uses and c.dim in uses:
            root = entry(uses[c.root][0])
            value = (f"{c.mul} * " if c.mul != 1 else "") + root + (f" + {c.add}" if c.add > 0 else
                                                                    f" - {-c.add}" if c.add < 0 else "")
            lines += [f"{entry(u)} = {value}" for u in uses[c.dim]]
        elif c.action == "set_range" and c.dim and c.dim in uses:
            rng = ", ".join(f"{k}={v}" for k, v in (("min", c.min), ("max", c.max)) if v is not None)
            lines += [f'{entry(u)} = torch.export.Dim("{c.dim}"{", " + rng if rng else ""})' for u in uses[c.dim]]
        elif c.action == "make_static" and c.dim and c.dim in uses:
            lines += [f"{entry(u)} = torch.export.Dim.STATIC" for u in uses[c.dim]]
        elif c.action == "make_static" and c.input is not None and c.axis is not None and c.input in inputs:
            lines.append(f"{entry((c.input, c.axis))} = torch.export.Dim.STATIC")
        else:
            return None
    if not lines or "import torch" not in script.text:
        return None
    indent = indent_of(script.line(site.insert_at)) if site.insert_at <= len(script.lines) else ""
    edit = Edit(script.path, site.insert_at, site.insert_at - 1, [indent + ln for ln in dict.fromkeys(lines)])
    return Fix("dynamic_shapes", "\n".join(dict.fromkeys(lines)), [edit],
               f"set the entries of {var} that torch's suggestion changes, after the code that builds it", "")


def _uses(spec: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    """Dim name -> the (input, axis) entries of the JSON spec that use it."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, dims in (spec.get("inputs") or {}).items():
        if isinstance(dims, list):
            for axis, d in enumerate(dims):
                if isinstance(d, dict) and isinstance(d.get("dim"), str):
                    out.setdefault(d["dim"], []).append((name, axis))
    return out


def _named_dims(script: Script, site: SpecSite, fix_lines: list[str],
               spans: dict[int, list[tuple[int, int, str]]]) -> list[Edit] | None:
    """torch's `NAME = ...` lines placed where those Dims are defined: a lone `NAME = Dim(...)` is replaced, other
    definitions (`dx, dy = dims(...)`) get the line after them, and a Dim written inline in the spec
    (`{0: Dim("n", max=64)}`) is replaced in place (its span added to `spans`). None when a name has no definition
    to follow."""
    edits: list[Edit] = []
    inserts: list[str] = []
    last: ast.stmt | None = None
    for line in fix_lines:
        name, value = (s.strip() for s in line.split(" = ", 1))
        defs = script.assignments_before(name, site.line, site.scope)
        if not defs:
            inline = _inline_dim(script, site, name, value)
            if inline is None:
                return None
            spans.setdefault(inline[0], []).append(inline[1:])
            continue
        d = defs[-1]
        root = re.fullmatch(r"(?:-?\d+\*)?([A-Za-z_]\w*)(?:\s*[+-]\s*\d+)?", value)
        root_ok = root is None or root.group(1) == "Dim" or any(
            r.lineno < d.lineno for r in script.assignments_before(root.group(1), site.line, site.scope))
        if (isinstance(d, ast.Assign) and len(d.targets) == 1 and isinstance(d.targets[0], ast.Name)
                and d.lineno == d.end_lineno and root_ok):
            edits.append(Edit(script.path, d.lineno, d.lineno, [indent_of(script.line(d.lineno)) + line]))
        else:
            inserts.append(line)
            last = d if last is None or d.lineno > last.lineno else last
    if inserts and last is not None:
        end = last.end_lineno or last.lineno
        indent = indent_of(script.line(last.lineno))
        edits.append(Edit(script.path, end + 1, end, [indent + s for s in inserts]))
    return edits


def _inline_dim(script: Script, site: SpecSite, name: str, value: str) -> tuple[int, int, int, str] | None:
    """(line, start, end, new text) replacing a `Dim("NAME", ...)` written inside the spec: torch's `NAME = 4`
    makes it `Dim.STATIC`, `NAME = Dim('NAME', min=3)` takes the new range; a relation to another Dim cannot be
    written inline (None)."""
    for node in _spec_nodes(script, site):
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and script.segment(call.func).rsplit(".", 1)[-1] == "Dim"
                    and call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == name
                    and call.lineno == call.end_lineno):
                continue
            func = script.segment(call.func)
            if re.fullmatch(r"-?\d+", value):
                new = f"{func}.STATIC"
            elif value.startswith("Dim("):
                new = func + value[len("Dim"):].replace(f"'{name}'", f'"{name}"', 1)
            else:
                return None
            return call.lineno, call.col_offset, call.end_col_offset or 0, new
    return None


def _spec_nodes(script: Script, site: SpecSite) -> list[ast.expr]:
    """The expressions the spec is written in: the argument itself, or what the name it passes was bound to."""
    spec = site.spec
    if not isinstance(spec, ast.Name):
        return [spec] if spec is not None else []
    found: list[ast.expr] = []
    for d in script.assignments_before(spec.id, site.line, site.scope):
        if isinstance(d, ast.Assign):
            found.append(d.value)
    for node in ast.walk(site.scope):
        if isinstance(node, ast.Assign) and node.lineno < site.line:
            if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == spec.id
                   for t in node.targets):
                found.append(node.value)
    return found


def _narrow_named(line: str) -> str:
    name, value = (s.strip() for s in line.split(" = ", 1))
    if re.fullmatch(r"-?\d+", value):
        return f"the exported program accepts only {name} == {value}"
    lo, hi = re.search(r"min=(-?\d+)", value), re.search(r"max=(-?\d+)", value)
    if lo or hi:
        rng = " and ".join(x for x in (f"{name} >= {lo.group(1)}" if lo else "",
                                       f"{name} <= {hi.group(1)}" if hi else "") if x)
        return f"the exported program accepts only {rng}"
    return f"the exported program requires {name} == {value} (the model needs it)"


def _spec_arg(call: ast.Call) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == "dynamic_shapes"), None)
    if kw is None and len(call.args) > _POSITION:
        kw = call.args[_POSITION]
    return kw


def _spec_element(script: Script, site: SpecSite, input_name: str, axis: int,
                  inputs: list[str]) -> ast.expr | None:
    """The node of the spec entry for `input_name`'s dimension `axis`, followed through plain assignments."""
    spec = site.spec
    entry: ast.expr | None = None
    if isinstance(spec, ast.Name):
        subs = script.subscript_assignments_before(spec.id, input_name, site.line, site.scope)
        defs = [d for d in script.assignments_before(spec.id, site.line, site.scope) if isinstance(d, ast.Assign)]
        last_sub = subs[-1] if subs else None
        last_def = defs[-1] if defs else None
        if last_sub is not None and (last_def is None or last_sub.lineno > last_def.lineno):
            entry = last_sub.value
        elif last_def is not None:
            spec = last_def.value
    if entry is None and isinstance(spec, ast.Dict):
        for k, v in zip(spec.keys, spec.values):
            if isinstance(k, ast.Constant) and k.value == input_name:
                entry = v
    elif entry is None and isinstance(spec, (ast.Tuple, ast.List)) and input_name in inputs:
        i = inputs.index(input_name)
        entry = spec.elts[i] if i < len(spec.elts) else None
    if isinstance(entry, (ast.Tuple, ast.List)):
        return entry.elts[axis] if axis < len(entry.elts) else None
    if isinstance(entry, ast.Dict):
        for k, v in zip(entry.keys, entry.values):
            if isinstance(k, ast.Constant) and k.value == axis:
                return v
    return None
