"""What the window shows of a lowering (Qt-free): the source painted delegated / not delegated with the partitioner's
reason (an overlay, core/graph/overlays.py, in the same two colours after every backend: palette.py's
DELEGATION_CATEGORIES), the table "not delegated: op, reason, count", and the comparison of the
source with its `.pte`, linked through the ETRecord's debug handles (the lower job's `source_to_pte`, the one map of
core/deploy/handle_map.py)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from pt2_viewer.core.compare.mapping import Link, NodeMapping
from pt2_viewer.core.compare.session import CompareSession, op_rows
from pt2_viewer.core.deploy.handle_map import DEBUG_HANDLE
from pt2_viewer.core.graph import palette
from pt2_viewer.core.graph.overlays import Overlay, category_overlay
from pt2_viewer.core.jobs.schemas.lower import LowerResult, NotDelegated
from pt2_viewer.core.jobs.schemas.numerics import NodeErrorRecord, NumericsResult
from pt2_viewer.core.model.program import Program

OVERLAY = "Delegation"
DELEGATED, NOT_DELEGATED = "delegated", "not delegated"
LINK_METHOD = DEBUG_HANDLE  # the links come from the ETRecord's debug handles: the diff's matcher trusts them


@dataclass
class ReasonRow:
    """One row of the table: an op left out for one reason, how many times, and where."""

    op: str
    reason: str
    nodes: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.nodes)


def reason_rows(not_delegated: list[NotDelegated]) -> list[ReasonRow]:
    """Rows "op, reason, count", most frequent first; each keeps its nodes for the click that reveals them."""
    rows: dict[tuple[str, str], ReasonRow] = {}
    for r in not_delegated:
        key = (r.target, r.reason)
        rows.setdefault(key, ReasonRow(*key)).nodes.append(r.node)
    counts = Counter({k: v.count for k, v in rows.items()})
    return [rows[k] for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def delegation_overlay(result: LowerResult) -> Overlay:
    """The source's nodes as delegated / not delegated; the reason in the tooltip and in Details."""
    backend = result.backend or ""
    values = {n: DELEGATED for n in result.delegated or []}
    reasons = {r.node: r.reason for r in result.not_delegated or []}
    values.update({n: NOT_DELEGATED for n in reasons})
    overlay = category_overlay(OVERLAY, values, fixed=palette.DELEGATION_CATEGORIES)
    for node, reason in reasons.items():
        overlay.texts[node] = f"{NOT_DELEGATED}: {reason}"
        overlay.rows[node] = [(OVERLAY, f"{NOT_DELEGATED} ({backend})"), ("Reason", reason)]
    for node in result.delegated or []:
        overlay.texts[node] = f"{DELEGATED} to {backend}"
        overlay.rows[node] = [(OVERLAY, f"{DELEGATED} to {backend}")]
    return overlay


def lowered_session(source: Program, pte: Program, source_to_pte: dict[str, list[str]], source_title: str,
                    pte_title: str) -> CompareSession:
    """The source beside its `.pte`, each source node linked to the `.pte` nodes computing it."""
    shown = {n.name for n in pte.graph.nodes}
    links = [Link(s, p, LINK_METHOD) for s, nodes in source_to_pte.items() for p in nodes if p in shown]
    mapping = NodeMapping([n.name for n in source.graph.nodes], [n.name for n in pte.graph.nodes], links,
                          source_title, pte_title)
    return CompareSession(source, pte, mapping, op_rows(source, pte), None, "etrecord", left_title=source_title,
                          right_title=pte_title)


def summary(result: LowerResult) -> str:
    delegated, left = result.delegated or [], result.not_delegated or []
    return (f"{Path(str(result.pte)).name} ({result.backend}): {len(delegated)} of "
            f"{len(delegated) + len(left)} ops delegated")


def on_pte_graph(result: NumericsResult) -> NumericsResult:
    """A `.pte` numerics result re-keyed by the `.pte` graph's nodes (each row's `candidate`), so the same error
    overlay paints the `.pte` beside its source; where two rows share a node, the larger error stays."""
    rows: dict[str, NodeErrorRecord] = {}
    for r in result.nodes or []:
        mine = replace(r, node=r.candidate, candidate=r.node)
        old = rows.get(mine.node)
        if old is None or _error(mine.error) > _error(old.error):
            rows[mine.node] = mine
    found = result.first_divergence
    by_source = {r.node: r.candidate for r in result.nodes or []}
    moved = replace(found, node=by_source.get(found.node, found.node)) if found else None
    return replace(result, nodes=list(rows.values()), first_divergence=moved)


def _error(error: float | str) -> float:
    try:
        return float(error)
    except (TypeError, ValueError):
        return 0.0
