# ruff: noqa: E501  (the page template: its HTML lines are kept whole)
"""Write the report page: one HTML file holding its data (JSON), CSS and script inline, and nothing it must fetch.

A report is attached to an issue or mailed, so it must open anywhere offline: no network, no external files. The data
sits in a `<script type="application/json">` element, with `</` escaped so no value can end the element early.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.graph import palette
from pt2_viewer.core.report.assets import CSS, ERROR_TRAP, JS, KIND_COLOURS


@dataclass
class ReportPage:
    """Everything a report shows: programs (each from `program_section`) and HTML for the Report tab (calls,
    problems, a compare: what the source of the report adds)."""

    title: str
    subtitle: str = ""
    programs: list[dict[str, Any]] = field(default_factory=list)
    extra_html: str = ""
    extra_tab: str = "Report"
    empty_note: str = ""  # what the graph pane says when there is no program (a failed script: why)
    extra_js: str = ""  # script and style the Report tab's HTML needs (the Compare tab's diff links)
    extra_css: str = ""


def _json_for_script(data: Any) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def render_page(page: ReportPage) -> str:
    data = {"programs": page.programs, "extra_html": page.extra_html}
    empty = (f'<p id="empty-note" class="note" style="padding:24px;font-size:15px">{html.escape(page.empty_note)}</p>'
             if page.empty_note and not page.programs else "")
    extra_button = (f'<button data-tab="extra">{html.escape(page.extra_tab)}</button>' if page.extra_html else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{html.escape(page.title)} - PT2 Viewer report</title>
<style>{CSS}{page.extra_css}</style></head>
<body>
<header><h1>{html.escape(page.title)}</h1><span class="muted">{html.escape(page.subtitle)}</span>
<select id="program"></select>
<span id="counts"><span id="node-count"></span>·<span id="group-count" class="muted"></span>·<span id="visible-count"
 class="muted"></span></span>
<input id="search" placeholder="search names, ops, modules" size="34"
 title="A regex over node names, ops and module paths; Enter goes to the next match"><span id="search-count"></span>
<span id="overlay" class="muted"></span>
<button id="expand-all">Expand all</button><button id="collapse-all">Collapse all</button><button id="fit">Fit</button>
</header>
<div id="main"><div id="graph">{empty}<svg id="svg" xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10"
 refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#889"/></marker></defs>
<g id="world"></g></svg></div>
<div id="side"><div id="tabs"><button data-tab="details">Details</button><button data-tab="signature">Signature</button>
<button data-tab="symbols">Symbols &amp; guards</button>{extra_button}</div>
<div id="tab-details" class="tab"><p class="note">Click a node for its details; click a group's title to expand or
collapse it; drag to pan, wheel to zoom.</p></div><div id="tab-signature" class="tab"></div>
<div id="tab-symbols" class="tab"></div><div id="tab-extra" class="tab"></div></div></div>
<script type="application/json" id="report-data">{_json_for_script(data)}</script>
<script>{ERROR_TRAP}</script>
<script>const COLOURS = {json.dumps(KIND_COLOURS)}, SCALE = {json.dumps(palette.OVERLAY_SCALE_LIGHT)},
CATEGORIES = {json.dumps(palette.OVERLAY_CATEGORIES)};
{JS}{page.extra_js}</script>
</body></html>
"""
