# ruff: noqa: E501  (inline JavaScript and CSS: their lines are kept whole)
"""The report's Compare tab for two (or more) archives: their diff (core/diff/), painted on both graphs and listed.

`pt2-viewer report A.pt2 B.pt2` puts the programs side by side; this module adds, for each adjacent pair of
archives (their first programs): the diff as an overlay on each graph (added, removed and changed in the diff colours
of core/graph/palette.py; a collapsed group says how many changes it holds), and the tab's HTML: the summary, the
module roll-up, the change list grouped by module (a click reveals the node, on either side), the signature, ranges
and guards. The page's script for those clicks is `DIFF_JS`.
"""
from __future__ import annotations

import html
from typing import Any

from pt2_viewer.core.diff.facts import ProgramFacts
from pt2_viewer.core.diff.nodes import NodeChange
from pt2_viewer.core.diff.output import change_text, summary_line
from pt2_viewer.core.diff.overlay import changed_nodes, group_changes
from pt2_viewer.core.diff.overlay import diff_overlay as core_overlay
from pt2_viewer.core.diff.program_diff import ProgramDiff
from pt2_viewer.core.graph import palette
from pt2_viewer.core.model.expr import range_text
from pt2_viewer.core.report.overlay import overlay_data
from pt2_viewer.core.util.words import plural

MAX_LISTED = 2000  # changes listed in the tab; the roll-up counts them all


def diff_overlay(diff: ProgramDiff, side: str) -> dict[str, Any]:
    """The page's overlay data for one side ("a" or "b"), from the window's (core/diff/overlay.py): each changed
    node's category and words, the category colours, and each module group's count of changes (shown on its box)."""
    data = overlay_data(core_overlay(diff, side))
    program = diff.a if side == "a" else diff.b
    data["notes"] = [summary_line(diff)]
    data["colours"] = list(palette.OVERLAY_CATEGORIES)
    data["group_changes"] = group_changes(ProgramFacts(program).index, changed_nodes(diff, side))
    return data


def _link(c: NodeChange, a_index: int, b_index: int) -> str:
    side, name = (b_index, c.b) if c.b is not None else (a_index, c.a)
    return (f"<a href='#' class='diff-{c.kind}' data-diff-program='{side}' data-diff-node='{html.escape(name or '')}'"
            f" data-diff-other='{a_index if c.b is not None else b_index}' "
            f"data-diff-other-node='{html.escape((c.a if c.b is not None else c.b) or '')}'>"
            f"{html.escape(change_text(c))}</a>")


def diff_html(diff: ProgramDiff, a_label: str, b_label: str, a_index: int, b_index: int) -> str:
    """The Compare tab's part for one pair: `a_index`/`b_index` are the programs' places in the page's list."""
    out = [f"<div class='sec'>{html.escape(a_label)} → {html.escape(b_label)}</div>",
           f"<p>{html.escape(summary_line(diff))}</p>", "<div class='sec'>Modules</div><table class='diff-modules'>"
           "<tr><th>module</th><th>+</th><th>−</th><th>~</th><th>what</th></tr>"]
    for m in diff.modules:
        pad = "&nbsp;" * (3 * m.depth)
        out.append(f"<tr><td>{pad}<code>{html.escape(m.path or '(model)')}</code></td><td>{m.added}</td>"
                   f"<td>{m.removed}</td><td>{m.changed}</td><td>{html.escape(m.text())}</td></tr>")
    out.append("</table>")
    outside = _outside_rows(diff)
    if outside:
        out.append("<div class='sec'>Signature, ranges and guards</div><table>" + "".join(outside) + "</table>")
    if diff.nodes:
        out.append(f"<div class='sec'>Changes ({plural(len(diff.nodes), 'node')}), by module; click to reveal</div>")
        by_module: dict[str, list[NodeChange]] = {}
        for c in diff.nodes[:MAX_LISTED]:
            by_module.setdefault(c.module, []).append(c)
        for module, changes in sorted(by_module.items()):
            out.append(f"<div class='diff-module'><code>{html.escape(module or '(model)')}</code></div><ul class='diff-list'>"
                       + "".join(f"<li>{_link(c, a_index, b_index)}</li>" for c in changes) + "</ul>")
        if len(diff.nodes) > MAX_LISTED:
            out.append(f"<p class='note'>… and {len(diff.nodes) - MAX_LISTED} more (pt2-viewer diff --json lists all)</p>")
    return "".join(out)


def _outside_rows(diff: ProgramDiff) -> list[str]:
    rows = []
    for s in diff.signature:
        entry = s.b or s.a
        assert entry is not None
        types = f"{s.a.output.text} → {s.b.output.text}" if s.a and s.b else entry.output.text
        rows.append(f"<tr><td>{s.kind}</td><td>{s.section[:-1]} <code>{html.escape(entry.name)}</code> "
                    f"({html.escape(entry.kind)})</td><td>{html.escape(', '.join(s.what))}</td>"
                    f"<td><code>{html.escape(types)}</code></td></tr>")
    for r in diff.ranges:
        before = range_text(*r.a_range) if r.a_range else "–"
        after = range_text(*r.b_range) if r.b_range else "–"
        names = " → ".join(x for x in (r.a, r.b) if x)
        rows.append(f"<tr><td>{r.kind}</td><td>range <code>{html.escape(names)}</code></td><td>dynamic</td>"
                    f"<td>{html.escape(before)} → {html.escape(after)}</td></tr>")
    rows += [f"<tr><td>removed</td><td>guard</td><td>dynamic</td><td><code>{html.escape(g)}</code></td></tr>"
             for g in diff.guards_removed]
    rows += [f"<tr><td>added</td><td>guard</td><td>dynamic</td><td><code>{html.escape(g)}</code></td></tr>"
             for g in diff.guards_added]
    return rows


# Clicks in the Compare tab's change list: show that program, open the groups around the node, select and centre it;
# Alt-click shows its counterpart on the other side. The page opens on the Compare tab.
DIFF_JS = r"""
function diffReveal(pi, name) {
  if (D.programs[pi] !== P) { $("program").value = pi; chooseProgram(pi); }
  const ni = P.graph.nodes.findIndex((n) => n.name === name); if (ni < 0) return false;
  const host = P.graph.nodes[ni].host;
  for (const g of [...chains[ni], ...(host === undefined ? [] : chains[host])]) open.add(g);
  select(ni); centerOn("n" + ni); showTab("extra"); return true;  // the change list stays in view
}
// `#reveal=PROGRAM:NODE` in the address opens the page on that node with the change list (a link to one change).
window.addEventListener("load", () => {
  const m = /#reveal=(\d+):(.+)$/.exec(decodeURIComponent(location.hash));
  if (D.extra_html) showTab("extra");
  if (m) setTimeout(() => diffReveal(+m[1], m[2]), 0);
});
document.addEventListener("click", (e) => {
  const t = e.target.closest && e.target.closest("[data-diff-node]"); if (!t) return;
  e.preventDefault();
  const other = e.altKey && t.dataset.diffOtherNode;
  if (other) diffReveal(+t.dataset.diffOther, t.dataset.diffOtherNode); else diffReveal(+t.dataset.diffProgram, t.dataset.diffNode);
});
"""
DIFF_CSS = ".diff-list{margin:2px 0 6px 0;padding-left:18px}.diff-list a{text-decoration:none;font:12px ui-monospace,monospace}" \
    ".diff-added{color:#1b6e1b}.diff-removed{color:#a32020}.diff-changed{color:#7a5c00}.diff-module{margin-top:6px}"
