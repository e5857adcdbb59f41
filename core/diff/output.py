"""A `ProgramDiff` written out: the JSON `pt2-viewer diff --json` prints, the plain summary with the module roll-up,
and a Markdown table for a pull-request comment or a CI job summary.

The JSON format is the one issue 29 names: `{"a", "b", "summary": {"added", "removed", "changed"}, "modules":
[{path, added, removed, changed}], "nodes": [{a, b, kind, what, module}], "signature", "range_constraints"}`, plus
`guards` (`{"added": [...], "removed": [...]}`) and `kinds` (which of `--fail-on`'s kinds it holds); against a `.pte`
(issue 43), the kind `lowered` with a `lowered` count in `summary` and each module, and each lowered node's `reason`
(between two `.pt2` programs the JSON is as it was).
"""
from __future__ import annotations

from typing import Any

from pt2_viewer.core.diff.nodes import ADDED, CHANGED, LOWERED, REMOVED, NodeChange
from pt2_viewer.core.diff.program_diff import FAIL_KINDS, ProgramDiff
from pt2_viewer.core.model.expr import range_text

_SIGN = {ADDED: "+", REMOVED: "-", CHANGED: "~", LOWERED: "·"}
MAX_TEXT_NODES = 200  # the plain text lists this many node changes, then says how many more


def to_json(diff: ProgramDiff, a_label: str, b_label: str) -> dict[str, Any]:
    return {
        "a": a_label,
        "b": b_label,
        "summary": diff.summary,
        "modules": [m.to_json() | ({"lowered": m.lowered} if diff.lowering else {}) for m in diff.modules],
        "nodes": [{"a": c.a, "b": c.b, "kind": c.kind, "what": c.what, "module": c.module}
                  | ({"reason": c.reason} if c.kind == LOWERED else {}) for c in diff.nodes],
        "signature": [s.to_json() for s in diff.signature],
        "range_constraints": [r.to_json() for r in diff.ranges],
        "guards": {"added": diff.guards_added, "removed": diff.guards_removed},
        "kinds": [k for k in FAIL_KINDS if k in diff.kinds()],
    }


def change_text(c: NodeChange) -> str:
    """'~ relu_3 -> gelu_3: op aten.relu.default -> aten.gelu.default' or '+ mul_4 (aten.mul.Tensor)', or for what
    lowering was expected to do '· relu -> delegate_0_0: lowered, taken into delegate_0_0 (XnnpackBackend)'."""
    if c.kind == LOWERED:
        name = c.a if c.b is None or c.a == c.b else c.b if c.a is None else f"{c.a} -> {c.b}"
        return f"· {name}: lowered, {c.reason}"
    if c.kind == ADDED:
        return f"+ {c.b} ({c.op})"
    if c.kind == REMOVED:
        return f"- {c.a} ({c.op})"
    name = c.a if c.a == c.b else f"{c.a} -> {c.b}"
    details = "; ".join(f"{'dynamic' if w == 'shape' and c.dynamic else w} {c.details[w][0]} -> {c.details[w][1]}"
                        for w in c.what if w != "args")
    if "args" in c.what:
        details = "; ".join(p for p in (details, "args") if p)
    return f"~ {name}: {details}"


def summary_line(diff: ProgramDiff) -> str:
    s = diff.summary
    kinds = [k for k in FAIL_KINDS if k in diff.kinds() and k != "any"]
    line = f"{s['added']} added, {s['removed']} removed, {s['changed']} changed" + (
        f", {s['lowered']} lowered" if s.get("lowered") else "")
    quiet = " (only what lowering does)" if s.get("lowered") else " (no change)"
    return line + (f" (kinds: {', '.join(kinds)})" if kinds else "" if diff.kinds() else quiet)


def _outside_graph_lines(diff: ProgramDiff) -> list[str]:
    lines = []
    for s in diff.signature:
        entry = s.b or s.a
        assert entry is not None
        what = f" ({', '.join(s.what)})" if s.what else ""
        types = f": {s.a.output.text} -> {s.b.output.text}" if s.a and s.b and s.a.output != s.b.output else ""
        lines.append(f"  {_SIGN[s.kind]} {s.section[:-1]} {entry.name} [{entry.kind}]{what}{types}")
    for r in diff.ranges:
        before = range_text(*r.a_range) if r.a_range else "-"
        after = range_text(*r.b_range) if r.b_range else "-"
        names = " -> ".join(s for s in (r.a, r.b) if s)
        lines.append(f"  {_SIGN[r.kind]} range {names}: {before} -> {after}")
    lines.extend(f"  - guard {g}" for g in diff.guards_removed)
    lines.extend(f"  + guard {g}" for g in diff.guards_added)
    return lines


def text(diff: ProgramDiff, a_label: str, b_label: str) -> str:
    lines = [f"{a_label} -> {b_label}: {summary_line(diff)}", "", "Modules:"]
    lines.extend(f"  {'  ' * m.depth}{m.path or '(model)'}: {m.text()}" for m in diff.modules)
    outside = _outside_graph_lines(diff)
    if outside:
        lines += ["", "Signature, ranges and guards:", *outside]
    if diff.nodes:
        lines += ["", "Nodes:"]  # what lowering was not expected to do first, then what it was
        ordered = sorted(diff.nodes, key=lambda c: c.kind == LOWERED)
        lines.extend(f"  {change_text(c)}" + (f"   [{c.module}]" if c.module else "")
                     for c in ordered[:MAX_TEXT_NODES])
        if len(diff.nodes) > MAX_TEXT_NODES:
            lines.append(f"  … and {len(diff.nodes) - MAX_TEXT_NODES} more (--json lists them all)")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(diff: ProgramDiff, a_label: str, b_label: str) -> str:
    s = diff.summary
    lines = [f"### `{_cell(a_label)}` → `{_cell(b_label)}`", "",
             f"**{s['added']} added, {s['removed']} removed, {s['changed']} changed"
             + (f", {s['lowered']} lowered" if s.get("lowered") else "") + "**"
             + (f" · kinds: {', '.join(k for k in FAIL_KINDS if k in diff.kinds())}" if diff.kinds() else ""), "",
             "| module | added | removed | changed | what |", "| --- | ---: | ---: | ---: | --- |"]
    for m in diff.modules:
        lines.append(f"| {'&nbsp;&nbsp;' * m.depth}`{_cell(m.path or '(model)')}` | {m.added} | {m.removed} | "
                     f"{m.changed} | {_cell(m.text())} |")
    outside = _outside_graph_lines(diff)
    if outside:
        lines += ["", "<details><summary>Signature, ranges and guards</summary>", "", "```",
                  *(line.strip() for line in outside), "```", "</details>"]
    if diff.nodes:
        lines += ["", f"<details><summary>{len(diff.nodes)} node changes</summary>", "",
                  "| kind | A | B | what | module |", "| --- | --- | --- | --- | --- |"]
        lines.extend(f"| {c.kind} | {_cell(c.a or '')} | {_cell(c.b or '')} | {', '.join(c.what)} | "
                     f"`{_cell(c.module)}` |" for c in diff.nodes[:1000])
        if len(diff.nodes) > 1000:
            lines.append(f"| … | {len(diff.nodes) - 1000} more | | | |")
        lines.append("</details>")
    return "\n".join(lines)
