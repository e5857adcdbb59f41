"""Candidate fixes to the user's model code, in the user's names: `torch._check` for a data-dependent guard (bounds
for `.tolist()`/`.item()` values), a `torch.cond` rewrite of an `if` on tensor data, `strict=False` where strict mode
refuses Python, a direct write instead of `.data`, and a `register_fake` stub beside a custom op's definition.

Each builder returns the fixes to try, best first, and a `reason`: what the user must decide when none of them can be
verified, or what a fix narrows. Nothing here runs or imports torch; `verify` proves the fixes by exporting again.
"""
from __future__ import annotations

import ast
import glob
import os
import re
from dataclasses import dataclass, field

from pt2_viewer.core.export.fixes.edits import Edit, Fix, indent_of
from pt2_viewer.core.export.fixes.source import Script, bound_names
from pt2_viewer.core.export.plain_words import user_words

_FLIP = {">=": "<", "<=": ">", ">": "<=", "<": ">=", "==": "!=", "!=": "=="}
_SYMBOL = re.compile(r"\b([uf]\d+)\b")


@dataclass
class Candidates:
    """The fixes to try for one problem, best first, and the words shown when none is verified."""

    fixes: list[Fix] = field(default_factory=list)
    reason: str = ""
    message: str = ""  # the problem said in the user's words, when the fixer could ("" keeps torch's)


def check_text(expr: str, holds: bool, names: dict[str, str]) -> str:
    """The condition to pass to torch._check: `expr` (or its negation) in the user's names; `((u0//2)) >= 5`, True,
    {u0: a} -> `a // 2 >= 5`; `Eq(u0, 4)`, False -> `u0 != 4`."""
    text = _SYMBOL.sub(lambda m: names.get(m.group(1), m.group(1)), expr)
    text = re.sub(r"\(\(([^()]*)\)\)", r"(\1)", text)
    text = re.sub(r"^\(([^()]*)\)(?=\s*(?:[<>=!]=?))", r"\1", text.strip())
    text = re.sub(r"(\w)//(\w)", r"\1 // \2", text)
    eq = re.fullmatch(r"(Eq|Ne)\(([^(),]+), ([^(),]+)\)", text)  # sympy's spelling of == and !=
    if eq:
        text = f"{eq.group(2)} {'==' if eq.group(1) == 'Eq' else '!='} {eq.group(3)}"
    if holds:
        return text
    return negate(text)


def negate(text: str) -> str:
    m = re.fullmatch(r"(.+?)\s*(>=|<=|==|!=|>|<)\s*(.+)", text)
    if m and not re.search(r"[<>=!]", m.group(3)):
        return f"{m.group(1)} {_FLIP[m.group(2)]} {m.group(3)}"
    return f"not ({text})"


def narrows_text(condition: str) -> str:
    return f"the exported program will reject inputs where {negate(condition)}"


def insert_before(script: Script, line: int, code: list[str]) -> Edit:
    indent = indent_of(script.line(line))
    return Edit(script.path, line, line - 1, [indent + c for c in code])


def data_dependent(script: Script, line: int, expr: str, result: str | None, names: dict[str, str]) -> Candidates:
    """A guard torch could not decide (`expr`, which was `result` for the example inputs) at the user's `line`."""
    stmt = script.statement_at(line)
    symbols = set(_SYMBOL.findall(expr))
    unmapped = symbols - set(names)
    test = getattr(stmt, "test", None) if isinstance(stmt, (ast.If, ast.While, ast.Assert)) else None
    out = Candidates()
    if stmt is None:
        out.reason = f"torch could not decide `{user_words(expr, names)}`, but the line it names is not in the script."
        return out
    if test is not None:
        example = [f"it was {result} for the example inputs"] if result in ("True", "False") else []
        asked = [] if unmapped else [f"export's question was `{user_words(expr, names)}`"]
        said = f" ({'; '.join(asked + example)})" if asked or example else ""
        out.message = (f"export could not decide `{script.segment(test)}` while tracing: it depends on tensor "
                       f"data{said}")
    if isinstance(stmt, ast.If) and test is not None and re.fullmatch(r"Eq\(u\d+, 1\)", expr) and unmapped:
        branch = tensor_branch(script, stmt, test)  # `if y.sum() > 0`: the implicit .item() of a tensor's truth
        branch.message = out.message
        return branch
    if unmapped and test is not None and isinstance(test, ast.Compare) and result in ("True", "False", None):
        # torch's symbols have no variable (a .tolist() element); the user's own test says the same. Without
        # torch's result (its draft export failed) the test is taken to hold, as a bounds check does.
        condition = script.segment(test)
        if result == "False":
            condition = negate(condition)
    elif not unmapped and result in ("True", "False"):
        condition = check_text(expr, result == "True", names)
    else:
        out.reason = (f"export could not decide `{user_words(expr, names)}` at line {line}, a value read from tensor "
                      "data that no variable of the script holds: give the value a name (v = t.item()) and diagnose "
                      "again.")
        return out
    out.fixes.append(Fix("torch_check", f"torch._check({condition})", [insert_before(script, stmt.lineno, [
        f"torch._check({condition})"])], f"tell export that {condition} holds", narrows_text(condition)))
    if isinstance(stmt, ast.If):
        out.reason = (f"export specialized this branch to {result or 'True'}; if both branches matter, rewrite it with "
                      f"torch.cond: {cond_sketch(script, stmt)}")
    return out


def tensor_branch(script: Script, stmt: ast.If, test: ast.expr) -> Candidates:
    """`if <tensor>:` whose branches return tensors -> torch.cond; else name the condition and torch._check it."""
    out = Candidates()
    cond = cond_rewrite(script, stmt)
    if cond is not None:
        out.fixes.append(cond)
    name = fresh_name(script, stmt, "take_branch")
    condition = script.segment(test)
    indent = indent_of(script.line(stmt.lineno))
    first = script.line(stmt.lineno)
    header = first[:len(indent)] + first[len(indent):].replace(condition, name, 1) if condition in first else None
    if header is not None and stmt.test.lineno == stmt.test.end_lineno == stmt.lineno:
        out.fixes.append(Fix("torch_check", f"torch._check({name})", [
            Edit(script.path, stmt.lineno, stmt.lineno, [f"{indent}{name} = ({condition}).item()",
                                                         f"{indent}torch._check({name})", header])],
            f"name the condition `{condition}` and tell export it holds",
            f"the exported program will reject inputs where {condition} is False"))
    out.reason = (f"`{condition}` is decided by tensor data; export can keep one branch only (torch._check, which "
                  f"rejects the other inputs) or both with torch.cond: {cond_sketch(script, stmt)}")
    return out


def _branch_returns(script: Script, stmt: ast.If) -> tuple[ast.expr, ast.expr, int] | None:
    """(then-value, else-value, last line) when both branches are a single `return`."""
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Return) or stmt.body[0].value is None:
        return None
    if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.Return) and stmt.orelse[0].value is not None:
        return stmt.body[0].value, stmt.orelse[0].value, stmt.end_lineno or stmt.lineno
    if not stmt.orelse:
        parents = script.parent_map()
        body = getattr(parents.get(stmt), "body", [])
        if stmt in body:
            after = body[body.index(stmt) + 1:]
            if after and isinstance(after[0], ast.Return) and after[0].value is not None:
                return stmt.body[0].value, after[0].value, after[0].end_lineno or after[0].lineno
    return None


def _operands(script: Script, stmt: ast.If, values: list[ast.expr]) -> list[str]:
    """The function's parameters and locals that the branches read, in order: torch.cond's operands."""
    func = script.scope_of(stmt)
    local: set[str] = set()
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        local = {a.arg for a in func.args.args + func.args.kwonlyargs} - {"self"}
        for node in ast.walk(func):
            if isinstance(node, ast.stmt):
                local |= bound_names(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else set()
    out: list[str] = []
    for value in values:
        for node in ast.walk(value):
            if isinstance(node, ast.Name) and node.id in local and node.id not in out:
                out.append(node.id)
    return out


def cond_rewrite(script: Script, stmt: ast.If) -> Fix | None:
    found = _branch_returns(script, stmt)
    if found is None:
        return None
    then, other, last = found
    a, b = script.segment(then), script.segment(other)
    if "\n" in a or "\n" in b:
        return None
    indent = indent_of(script.line(stmt.lineno))
    code = _cond_call(script, stmt, then, other)
    return Fix("torch_cond", code, [Edit(script.path, stmt.lineno, last, [indent + code])],
               "keep both branches in the program with torch.cond", "")


def cond_sketch(script: Script, stmt: ast.If) -> str:
    found = _branch_returns(script, stmt)
    test = script.segment(stmt.test)
    if found is None:
        return (f"torch.cond({test}, true_fn, false_fn, (operands,)), where true_fn and false_fn take the tensors "
                "both branches use and return tensors of the same shapes")
    return _cond_call(script, stmt, found[0], found[1])


def _cond_call(script: Script, stmt: ast.If, then: ast.expr, other: ast.expr) -> str:
    ops = _operands(script, stmt, [then, other])
    params = ", ".join(ops)
    operands = f"({params},)" if len(ops) == 1 else f"({params})"
    lam = f"lambda {params}: " if ops else "lambda: "
    return (f"return torch.cond({script.segment(stmt.test)}, {lam}{script.segment(then)}, "
            f"{lam}{script.segment(other)}, {operands})")


def fresh_name(script: Script, node: ast.AST, base: str) -> str:
    used = {n.id for n in ast.walk(script.scope_of(node)) if isinstance(n, ast.Name)}
    name, i = base, 1
    while name in used:
        i += 1
        name = f"{base}_{i}"
    return name


STRICT_NARROWS = ("non-strict export runs the Python as-is and records only tensor operations: what plain Python "
                  "computes while exporting (such as id(x)) is baked into the program as a constant")


def strict_false(script: Script, call_line: int, convention: bool = False) -> Candidates:
    """Strict mode refused a Python construct: export this call with strict=False (`convention`: the script's
    module-level `strict = True`, which the worker's own export of `model` reads)."""
    out = Candidates(reason="strict export (TorchDynamo) cannot trace this Python; rewrite it with tensor "
                            "operations, or export with strict=False, which runs your Python as-is.")
    if convention:
        return _module_strict_false(script, out)
    call = script.export_call_at(call_line)
    if call is None:
        out.reason += " The export call is not written in the script, so no patch can set strict=False there."
        return out
    kw = next((k for k in call.keywords if k.arg == "strict"), None)
    if kw is not None:
        v = kw.value
        if v.lineno != v.end_lineno:
            return out
        text = script.line(v.lineno)
        new = text[:v.col_offset] + "False" + text[v.end_col_offset or 0:]
        edit = Edit(script.path, v.lineno, v.lineno, [new])
    else:
        end_line, end_col = call.end_lineno or call.lineno, (call.end_col_offset or 1) - 1
        text = script.line(end_line)
        before = text[:end_col].rstrip()
        if not before.strip():  # the closing parenthesis alone on its line: a line of its own above it
            values = [*call.args, *(k.value for k in call.keywords)]
            if not values:
                return out
            last = max(values, key=lambda v: (v.end_lineno or 0, v.end_col_offset or 0))
            at = last.end_lineno or last.lineno
            line_text = script.line(at)
            tail = line_text[last.end_col_offset or 0:].strip()
            if tail not in ("", ","):
                return out
            first = indent_of(script.line(last.lineno))
            out.fixes.append(Fix("strict", "strict=False", [Edit(script.path, at, at, [
                line_text + ("" if tail else ","), first + "strict=False,"])], "export this call in non-strict mode",
                STRICT_NARROWS))
            return out
        sep = "" if before.endswith("(") else " " if before.endswith(",") else ", "
        edit = Edit(script.path, end_line, end_line, [before + sep + "strict=False" + text[end_col:]])
    out.fixes.append(Fix("strict", "strict=False", [edit], "export this call in non-strict mode",
                         STRICT_NARROWS))
    return out


def _module_strict_false(script: Script, out: Candidates) -> Candidates:
    """`strict = True` at module level becomes `strict = False` (the last such line: the one the export reads); a
    script without one gets `strict = False` as its last line."""
    assigned = [n for n in script.tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Name) and n.targets[0].id == "strict"]
    if assigned:
        v = assigned[-1].value
        if v.lineno != v.end_lineno:
            return out
        text = script.line(v.lineno)
        edit = Edit(script.path, v.lineno, v.lineno, [text[:v.col_offset] + "False" + text[v.end_col_offset or 0:]])
    else:
        end = len(script.lines)
        edit = Edit(script.path, end + 1, end, ["strict = False"])
    out.fixes.append(Fix("strict", "strict = False", [edit], "export the module-level model in non-strict mode",
                         STRICT_NARROWS))
    return out


def data_write(script: Script, line: int, model: str = "") -> Candidates:
    """`x.data[...] = v`: write to the tensor itself so that the write is traced. torch names no line of the model
    for it (only the export call), so the model's class is searched when the line has no `.data`."""
    out = Candidates(reason="a write through `.data` escapes the trace; write to the tensor itself, or keep the "
                            "state in a registered buffer.")
    stmt = script.statement_at(line)
    where: list[ast.AST] = [stmt] if stmt is not None else []
    cls = script.class_named(model, line) if model else None
    if cls is not None:
        where.append(cls)
    for node in (n for w in where for n in ast.walk(w)):
        if (isinstance(node, ast.Attribute) and node.attr == "data" and node.lineno == node.end_lineno
                and isinstance(node.ctx, ast.Load)):
            text = script.line(node.lineno)
            inner = script.segment(node.value)
            new = text[:node.col_offset] + inner + text[node.end_col_offset or 0:]
            out.fixes.append(Fix("rewrite", new.strip(), [Edit(script.path, node.lineno, node.lineno, [new])],
                                 f"write to {inner} itself instead of {inner}.data (export records the write)", ""))
            break
    return out


def fake_kernel(script_path: str, op: str) -> Candidates:
    """A custom op without a fake kernel: a `register_fake` stub beside the op's definition (in the script or a file
    of the user's beside it)."""
    qualified = op_name(op)
    stub = (f"@torch.library.register_fake(\"{qualified}\")\ndef _(*args):\n    return torch.empty_like(args[0])")
    out = Candidates(reason=f"torch.ops.{qualified.replace('::', '.')} has no fake kernel, so export cannot know its "
                            f"output's shape; register one beside the op's definition, e.g.\n{stub}")
    folder = os.path.dirname(os.path.abspath(script_path))
    paths = [script_path] + sorted(p for p in glob.glob(os.path.join(folder, "*.py"))
                                   if os.path.realpath(p) != os.path.realpath(script_path))
    for path in paths:
        script = Script.read(path)
        if script is None or qualified not in script.text:
            continue
        for node in ast.walk(script.tree):
            if isinstance(node, ast.FunctionDef) and _defines_op(node, qualified):
                params = [a.arg for a in node.args.args]
                if not params:
                    continue
                tensor = next((a.arg for a in node.args.args if a.annotation is not None
                               and "Tensor" in script.segment(a.annotation)), params[0])
                lines = ["", "", f"@{node.name}.register_fake", f"def _({', '.join(params)}):",
                         f"    return torch.empty_like({tensor})"]
                end = node.end_lineno or node.lineno
                indent = indent_of(script.line(node.lineno - len(node.decorator_list)))
                out.fixes.append(Fix("register_fake", f"@{node.name}.register_fake",
                                     [Edit(path, end + 1, end, [indent + s if s else s for s in lines])],
                                     f"register a fake kernel for {qualified} that says its output has {tensor}'s "
                                     "shape and dtype (change it if the real kernel's output differs)", ""))
                return out
    return out


def op_name(op: str) -> str:
    """`doctor.scale.default`, `<CustomOpDef(doctor::scale)>` or `doctor::scale` -> `doctor::scale`."""
    m = re.search(r"(\w+)::(\w+)", op)
    if m:
        return f"{m.group(1)}::{m.group(2)}"
    parts = op.split(".")
    return f"{parts[0]}::{parts[1]}" if len(parts) >= 2 else op


def _defines_op(node: ast.FunctionDef, qualified: str) -> bool:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and dec.args and isinstance(dec.args[0], ast.Constant) \
                and dec.args[0].value == qualified:
            return True
    return False


def specialized_int(script: Script, line: int, names: dict[str, str],
                    item_values: dict[str, object] | None = None, known: tuple[str, int] | None = None) -> Candidates:
    """Export needs a Python int from tensor data (range(a), int(a)). Only a rewrite keeps the program general; what
    a patch can do is pin the value the example inputs gave (`item_values`: line -> what `.item()` returned there,
    recorded by the worker, or `known`: what torch's draft export said it was) with `torch._check(a == 32)`, which
    the fix says it narrows to."""
    code = script.line(line).strip()
    stmt = script.statement_at(line)
    pinned = known or (_pinned_value(script, stmt, item_values or {}) if stmt is not None else None)
    held = pinned[0] if pinned else ", ".join(sorted(set(names.values()))) or "it"
    out = Candidates(reason=(
        f"export needs a plain Python int from tensor data at line {line} (`{code}`); a torch._check can give it "
        f"one only by pinning {held} to one value. To keep the program general, rewrite it with tensor operations "
        "that take the value as it is (e.g. y.unsqueeze(0).repeat(a, 1) instead of torch.cat over range(a); "
        "x * 0.5 ** n instead of a loop over range(n))."))
    error = (item_values or {}).get("error")
    out.message = f"export needs a plain Python int from tensor data at line {line} (`{code}`)"
    if error:
        out.reason = (f"the model fails on the example inputs even without export ({error}), so no change to the "
                      f"export can help; make `{code}` run in plain PyTorch first, then export again.")
        return out
    if pinned is None or stmt is None:
        return out
    name, value = pinned
    condition = f"{name} == {value}"
    out.fixes.append(Fix("torch_check", f"torch._check({condition})", [insert_before(script, stmt.lineno, [
        f"torch._check({condition})"])], f"pin {name} to {value}, its value for the example inputs",
        f"the exported program accepts only inputs where {name} == {value} (its value for the example inputs)"))
    return out


def _pinned_value(script: Script, stmt: ast.stmt, item_values: dict[str, object]) -> tuple[str, int] | None:
    """(variable, int) for a name the statement reads that an earlier `v = t.item()` line of its function bound,
    with the value that line gave on the example inputs."""
    read = [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    scope = script.scope_of(stmt)
    for name in dict.fromkeys(read):
        for d in reversed(script.assignments_before(name, stmt.lineno, scope)):
            value = item_values.get(str(d.lineno))
            if isinstance(value, int) and not isinstance(value, bool) and bound_names(d) == {name}:
                return name, value
    return None
