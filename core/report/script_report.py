"""A report for a model script's export folder (report.json and its .pt2 files): every export call with its outcome
and explanation, the doctor's problems when it ran, the guards, and the graph of each program it produced."""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from pt2_viewer.core.export.dim_names import dim_names, name_symbols
from pt2_viewer.core.export.failures import failure_from_json, first_sentence
from pt2_viewer.core.export.guards import guard_log_from_json
from pt2_viewer.core.export.plain_words import detail, headline, symbol_names, user_words
from pt2_viewer.core.layout.service import LayoutService
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.report.page import ReportPage
from pt2_viewer.core.report.program_report import program_section
from pt2_viewer.core.util.words import plural

REPORT_FILE = "report.json"


def _e(value: Any) -> str:
    return html.escape(str(value if value is not None else ""))


def _where(line: dict[str, Any] | None) -> str:
    if not line:
        return ""
    return f"{_e(Path(str(line.get('file', ''))).name)}:{_e(line.get('line'))} <code>{_e(line.get('code', ''))}</code>"


def calls_html(report: dict[str, Any]) -> str:
    """Each export call: where, model, mode, outcome; a failure's kind, message, user line, fixes and hint."""
    parts = [f"<div class='sec'>Script {_e(Path(str(report.get('script', ''))).name)}: "
             f"{_e(plural(len(report.get('calls', [])), 'export call'))}, "
             f"torch {_e(report.get('torch_version', '?'))}</div>"]
    for call in report.get("calls", []):
        mode = "strict" if call.get("strict") else "non-strict"
        guards = call.get("guards") or {}
        state = ("<span class='ok'>ok</span>" if call.get("ok")
                 else f"<span class='bad'>failed: {_e((call.get('failure') or {}).get('kind'))}</span>")
        parts.append(f"<div class='call'><div class='sec'>#{_e(call.get('index'))} {_e(call.get('model'))} "
                     f"({mode}) {state}</div><div>{_where(call.get('line'))}</div>")
        failure = call.get("failure")
        if failure:
            said, detail = failure_words(call)
            parts.append(f"<div><b>{_e(said)}</b></div><pre>{_e(detail)}</pre>"
                         f"<div>at {_where(failure.get('user_line'))}</div>")
            if failure.get("suggested_fixes_text"):
                fixes = "; ".join(failure["suggested_fixes_text"])
                parts.append(f"<div>torch suggests: <code>{_e(fixes)}</code></div>")
            parts.append(f"<div class='note'>{_e(failure.get('hint'))}</div>")
        rows = "".join(f"<tr><td><code>{_e(user_words(g.get('readable') or g.get('expr') or ''))}</code></td>"
                       f"<td>{_where(g.get('user_line'))}</td></tr>" for g in guards.get("guards", []))
        if rows:
            parts.append(f"<details><summary>{_e(plural(len(guards['guards']), 'guard'))}</summary>"
                         f"<table>{rows}</table></details>")
        parts.append(problems_html(call.get("problems"), failure_words(call)[1] if failure else "",
                                   (failure or {}).get("hint") or ""))
        parts.append("</div>")
    error = report.get("script_error")
    if error:
        said = (f"export #{error['call']} failed and the script did not catch it" if error.get("call") is not None
                else f"{str(error.get('type')).rsplit('.', 1)[-1]}: {user_words(str(error.get('message') or ''))}")
        parts.append(f"<div class='sec bad'>The script stopped: {_e(said)}"
                     f"</div><div>{_where(error.get('line'))}</div><div class='note'>{_e(error.get('hint'))}</div>")
    return "".join(parts)


def failure_words(call: dict[str, Any]) -> tuple[str, str]:
    """(the headline, torch's key message) of a failed call in the user's words: the same formatter as the window's
    Exports list and status bar (core/export/plain_words.py), so no `s97` or `L['a']` reaches the report. A failure
    this version cannot read back (a report from another one) gets torch's first sentence, in the user's words too."""
    try:
        failure = failure_from_json(call["failure"])
    except (TypeError, KeyError, AttributeError, ValueError):
        message = str((call.get("failure") or {}).get("message") or "")
        return user_words(first_sentence(message)), user_words(message)
    spec = call.get("dynamic_shapes_spec")
    names = symbol_names(guard_log_from_json(call.get("guards") or {}).symbols, dim_names(spec))
    return headline(failure, spec, names), detail(failure, names)


def problems_html(problems: dict[str, Any] | None, said: str = "", hint: str = "") -> str:
    """The doctor's findings for one call (core/export/doctor.py): each problem with its count, line and fix; a
    problem's message and suggestion are left out where they only repeat the call's failure (`said`, `hint`)."""
    if not problems:
        return ""
    parts = [f"<div class='sec'>Diagnose ({_e(problems.get('method'))}): "
             f"{_e(plural(len(problems.get('items', [])), 'problem'))}</div>"]
    if problems.get("note"):
        parts.append(f"<div class='note'>{_e(problems['note'])}</div>")
    for p in problems.get("items", []):
        message = "" if p.get("message") == said else f"<pre>{_e(p.get('message'))}</pre>"
        parts.append(f"<div><b>{_e(p.get('kind'))}</b> ×{_e(p.get('count'))} at {_where(p.get('user_line'))}"
                     + message)
        if p.get("suggestion") and p["suggestion"] != hint:
            parts.append(f"<div>torch suggests: <code>{_e(p['suggestion'])}</code></div>")
        if p.get("diff"):  # only verified fixes carry a diff (core/export/fixes/verify.py)
            parts.append(f"<div>verified fix ({_e(p.get('fix_kind'))}): re-exported with it, the call exports"
                         + (f"; {_e(p['narrows'])}" if p.get("narrows") else "") + f"</div><pre>{_e(p['diff'])}</pre>")
        if p.get("reason"):
            parts.append(f"<div class='note'>{_e(p['reason'])}</div>")
        parts.append("</div>")
    return "".join(parts)


def script_page(out_dir: str | Path, service: LayoutService | None = None) -> ReportPage:
    """The page for an export folder. Raises OSError/ValueError when report.json is missing or malformed."""

    out = Path(out_dir)
    report = json.loads((out / REPORT_FILE).read_text(encoding="utf-8"))
    programs = []
    for call in report.get("calls", []):
        draft = (call.get("problems") or {}).get("pt2")
        for pt2, label in ((call.get("pt2"), ""), (draft, " (draft)")):
            if not pt2:
                continue
            try:
                archive = read_archive(out / Path(pt2).name)
            except ArchiveError:
                continue  # the call's explanation is in the calls tab; a damaged archive just has no graph
            dims = dim_names(call.get("dynamic_shapes_spec"))
            said = symbol_names(guard_log_from_json(call.get("guards") or {}).symbols, dims)
            for p in archive.programs:
                name_symbols(p, dims)  # f32[batch, 3], as the script named it
                section = program_section(p, service, name=f"#{call.get('index')} {call.get('model')}{label}",
                                          dim_names=dims, names=said)  # its Symbols tab: batch (s52)
                section["guards"] = [user_words(g) for g in section.get("guards", [])]  # a.shape[0], not L['a']
                programs.append(section)
    calls = report.get("calls", [])
    ok = sum(1 for c in calls if c.get("ok"))
    subtitle = f"{plural(len(calls), 'export call')}, {ok} exported" + ("" if report.get("ok") else ", script stopped")
    return ReportPage(title=Path(str(report.get("script", "script"))).name, subtitle=subtitle, programs=programs,
                      extra_html=calls_html(report), extra_tab="Export calls", empty_note=empty_note(report))


def empty_note(report: dict[str, Any]) -> str:
    """Why a script's report has no graph to draw: its export failed (at which line), or it made no export call."""
    calls = report.get("calls", [])
    failed = next((c for c in calls if not c.get("ok")), None)
    if failed is not None:
        line = (failed.get("failure") or {}).get("user_line") or failed.get("line") or {}
        at = f" at line {line.get('line')}" + (f" ({line.get('code')})" if line.get("code") else "") if line else ""
        return (f"No program: the export of #{failed.get('index')} {failed.get('model')} failed{at}. "
                "The Export calls tab says why and what to change.")
    error = report.get("script_error") or {}
    if error:
        return f"No program: the script stopped before it exported anything ({error.get('type')})."
    return "No program: the script made no torch.export.export call."
