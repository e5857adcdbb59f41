"""A report for a `.pt2`: each program's graph (core/report/graph_data.py), signature, symbol ranges and guards,
read without torch like everything else that views an archive."""
from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pt2_viewer.core.diff.program_diff import diff_programs
from pt2_viewer.core.export.plain_words import user_words
from pt2_viewer.core.graph.details import symbol_label
from pt2_viewer.core.graph.op_stats import op_counts
from pt2_viewer.core.graph.summary import signature_rows
from pt2_viewer.core.layout.service import LayoutService
from pt2_viewer.core.model.expr import range_text
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.report.diff_report import DIFF_CSS, DIFF_JS, diff_html, diff_overlay
from pt2_viewer.core.report.graph_data import graph_data
from pt2_viewer.core.report.overlay import overlay_data, read_overlay
from pt2_viewer.core.report.page import ReportPage
from pt2_viewer.core.util.words import plural


def program_section(program: Program, service: LayoutService | None = None, name: str | None = None,
                    dim_names: Mapping[str, str] | None = None,
                    names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One program as the page's data: graph, signature rows, symbols with ranges, guards. A symbol a script named
    (`dim_names`: {"x.shape[0]": "batch"}, core/export/dim_names.py) is listed as `batch (s52)`, as in the window;
    with `names` (a script's report: torch's symbol -> the user's name, core/export/plain_words.py `symbol_names`)
    every other symbol leads with words too: `x.shape[1] (s52)`, `a value read from tensor data (u0)`."""
    sig = [{"direction": r.direction, "name": r.name, "kind": r.kind, "target": r.target,
            "type": " ".join(x for x in (r.dtype, r.shape) if x)} for r in signature_rows(program, program.graph)]

    def label(symbol: str, sources: list[str]) -> str:
        said = symbol_label(symbol, sources, dim_names)
        return f"{user_words(symbol, names)} ({symbol})" if names is not None and said == symbol else said
    symbols = [{"name": label(s.name, s.sources), "range": range_text(s.min, s.max), "sources": list(s.sources)}
               for s in program.symbols]
    known = {s.name for s in program.symbols}
    symbols += [{"name": label(k, []), "range": range_text(lo, hi), "sources": []}
                for k, (lo, hi) in program.range_constraints.items() if k not in known]
    return {"name": name or program.name, "graph": graph_data(program, service).as_json(), "signature": sig,
            "symbols": symbols, "guards": list(program.guards_code)}


def archives_page(archives: list[Archive], service: LayoutService | None = None,
                  overlay: str | Path | None = None) -> ReportPage:
    """One archive's programs; several archives (a program and its decomposition) side by side: every program in
    the page's program list, and a Compare tab with their diff (core/diff/: painted on both graphs, listed and rolled
    up by module) and each op's count on each side. `overlay` (a numerics result or
    a {node: value} JSON) colours the first program's nodes."""
    several = len(archives) > 1
    owned = service is None
    service = service or LayoutService()
    try:
        programs = [program_section(p, service, name=f"{Path(a.path).name}: {p.name}" if several else None)
                    for a in archives for p in a.programs]
    finally:
        if owned:
            service.close()
    every = [p for a in archives for p in a.programs]
    if overlay is not None and programs:
        programs[0]["overlay"] = overlay_data(read_overlay(overlay, every[0]))
    nodes = sum(p.node_count for p in every)
    torch = every[0].torch_version if every else ""
    subtitle = f"{plural(len(programs), 'program')}, {plural(nodes, 'node')}" + (f", torch {torch}" if torch else "")
    title = " vs ".join(Path(a.path).name for a in archives)
    page = ReportPage(title=title, subtitle=subtitle, programs=programs)
    if several:
        page.extra_html, page.extra_tab = diff_tab(archives, programs) + op_compare_html(archives), "Compare"
        page.extra_js, page.extra_css = DIFF_JS, DIFF_CSS
    return page


def diff_tab(archives: list[Archive], sections: list[dict[str, Any]]) -> str:
    """Each adjacent pair of archives diffed (their first programs, core/diff/): painted on both graphs (each program
    by its diff with the one before it; the first by its diff with the next), listed and rolled up by module."""
    firsts, at = [], 0
    for a in archives:
        firsts.append(at)
        at += len(a.programs)
    parts = []
    for k in range(len(archives) - 1):
        if not archives[k].programs or not archives[k + 1].programs:
            continue
        diff = diff_programs(archives[k].programs[0], archives[k + 1].programs[0])
        ia, ib = firsts[k], firsts[k + 1]
        if k == 0 and "overlay" not in sections[ia]:
            sections[ia]["overlay"] = diff_overlay(diff, "a")
        if "overlay" not in sections[ib]:
            sections[ib]["overlay"] = diff_overlay(diff, "b")
        parts.append(diff_html(diff, Path(archives[k].path).name, Path(archives[k + 1].path).name, ia, ib))
    return "".join(parts)


def op_compare_html(archives: list[Archive]) -> str:
    """Each op's count in each archive (all its programs, counted as the compare view counts: core/graph/op_stats.py),
    ops that differ first."""
    counts = [sum((op_counts(p) for p in a.programs), Counter[str]()) for a in archives]
    ops = sorted(set().union(*counts), key=lambda op: (len({c[op] for c in counts}) == 1, op))
    head = "".join(f"<th>{html.escape(Path(a.path).name)}</th>" for a in archives)
    rows = "".join(f"<tr{'' if len({c[op] for c in counts}) == 1 else ' class=bad'}><td><code>{html.escape(op)}"
                   f"</code></td>" + "".join(f"<td>{c[op]}</td>" for c in counts) + "</tr>" for op in ops)
    return f"<div class='sec'>Ops on each side (differences first)</div><table><tr><th>op</th>{head}</tr>{rows}</table>"
