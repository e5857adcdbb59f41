"""A diff as each side's overlay (core/graph/overlays.py): added, removed and changed nodes in the diff categories of
core/graph/palette.py, and what lowering was expected to do (`lowered`) in its muted one, each node's change in words,
and every module group's count of changes (lowered nodes not counted: a collapsed group says what stands out).

The window paints it like any overlay (a collapsed group takes the sum of its changes, said in its tooltip and the
legend), and the report turns it into the page's data, so both show a diff the same way.
"""
from __future__ import annotations

from pt2_viewer.core.diff.nodes import ADDED, CHANGED, LOWERED, REMOVED
from pt2_viewer.core.diff.output import change_text
from pt2_viewer.core.diff.program_diff import ProgramDiff
from pt2_viewer.core.graph import palette
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.overlays import LegendItem, Overlay
from pt2_viewer.core.util.words import plural

DIFF_OVERLAY = "Diff"
KINDS = (ADDED, REMOVED, CHANGED, LOWERED)


def changed_nodes(diff: ProgramDiff, side: str) -> dict[str, str]:
    """node -> its kind of change, on side "a" or "b" (`lowered` left out: what "Show changes only" opens)."""
    out: dict[str, str] = {}
    for c in diff.nodes:
        name = c.a if side == "a" else c.b
        if name is not None and c.kind != LOWERED:
            out[name] = c.kind
    return out


def diff_overlay(diff: ProgramDiff, side: str) -> Overlay:
    texts: dict[str, str] = {}
    categories: dict[str, int] = {}
    values: dict[str, float] = {}  # a collapsed group sums its changes; a lowered node is none
    for c in diff.nodes:
        name = c.a if side == "a" else c.b
        if name is not None:
            categories[name] = palette.DIFF_CATEGORIES[c.kind]
            texts[name] = change_text(c)
            if c.kind != LOWERED:
                values[name] = 1.0
    counts = {k: sum(1 for c in diff.nodes if c.kind == k and (c.a if side == "a" else c.b)) for k in KINDS}
    legend = [LegendItem(f"{k} ({counts[k]})", category=palette.DIFF_CATEGORIES[k]) for k in KINDS if counts[k]]
    return Overlay(DIFF_OVERLAY, categories=categories, legend=legend, texts=texts,
                   values=values, aggregate="sum",
                   fmt=lambda v: plural(int(v), "change"), notes=[])


def group_changes(index: GraphIndex, nodes: dict[str, str]) -> dict[str, int]:
    """Module group -> how many of `nodes` it holds, its subgroups' included (what a collapsed group says)."""
    out: dict[str, int] = {}
    for g in index.modules.walk():
        count = sum(1 for n in g.nodes if n in nodes)
        if count:
            for path in [g.path, *(p.path for p in g.ancestors())]:
                out[path] = out.get(path, 0) + count
    return out
