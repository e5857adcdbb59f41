"""What the `profile` command prints: one JSON object (docs/profile.md keeps its fields) or a short table of the
hottest nodes."""
from __future__ import annotations

from typing import Any

from pt2_viewer.core.profile.model import Attribution

TABLE_ROWS = 15  # the hottest nodes the text shows; --json has every node


def profile_json(a: Attribution) -> dict[str, Any]:
    """`{"program", "trace", "device", "calls", "nodes": [{"node", "target", "calls", "us", "mean_us"}],
    "unattributed_us"}`, nodes in graph order."""
    return {
        "program": a.program,
        "trace": a.trace,
        "device": a.device,
        "calls": a.calls,
        "nodes": [{"node": n.node, "target": n.target, "calls": n.calls, "us": round(n.us, 3),
                   "mean_us": round(n.mean_us, 3)} for n in a.nodes],
        "unattributed_us": round(a.unattributed_us, 3),
    }


def profile_text(a: Attribution, rows: int = TABLE_ROWS) -> str:
    """The hottest nodes first, with their share of the attributed time."""
    total = sum(n.us for n in a.nodes)
    runs = "run" if a.calls == 1 else "runs"
    lines = [f"{a.trace}: {a.calls} {runs} of {a.program} on {a.device}, {total / 1000:.3f} ms attributed to "
             f"{len(a.nodes)} nodes, {a.unattributed_us / 1000:.3f} ms unattributed"]
    hottest = sorted(a.nodes, key=lambda n: n.us, reverse=True)[:rows]
    width = max([len("node")] + [len(n.node) for n in hottest])
    lines.append(f"{'node':<{width}}  {'calls':>5}  {'total us':>12}  {'mean us':>12}  {'share':>6}  target")
    for n in hottest:
        share = 100 * n.us / total if total else 0.0
        lines.append(f"{n.node:<{width}}  {n.calls:>5}  {n.us:>12.1f}  {n.mean_us:>12.1f}  {share:>5.1f}%  "
                     f"{n.target}")
    if len(a.nodes) > rows:
        lines.append(f"... {len(a.nodes) - rows} more nodes (--json lists every one)")
    lines += [f"note: {note}" for note in a.notes]
    return "\n".join(lines)
