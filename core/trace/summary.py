"""What `pt2-viewer trace` prints: the trace's compiles, graph breaks and recompiles as one JSON object (the shape
issue 40 gives, a stable format for scripts) or as text for a person."""
from __future__ import annotations

from pt2_viewer.core.trace.model import Compile, Trace
from pt2_viewer.core.trace.reader import GRAPHS
from pt2_viewer.core.util.words import plural


def graphs_of(compile_: Compile) -> list[str]:
    """The graphs a compile made, each once, in the order torch makes them."""
    names = {a.name for a in compile_.artifacts}
    return [label for kind, label in GRAPHS.items() if kind in names]


def _rank(rank: int | None, ranked: bool) -> int | None:
    return (rank or 0) if ranked else None


def trace_json(trace: Trace) -> dict[str, object]:
    """{"compiles": [...], "graph_breaks": [...], "recompiles": [...]}; `rank` null for a single-process trace."""
    ranked = any(r is not None for r in trace.ranks)
    return {
        "compiles": [{
            "id": str(c.id),
            "rank": _rank(c.rank, ranked),
            "frame": ({"function": c.frame.function, "file": c.frame.file, "line": c.frame.line}
                      if c.frame else None),
            "status": c.status,
            "seconds": c.seconds,
            "graphs": graphs_of(c),
            "cache_hit": c.cache_hit,
        } for c in trace.compiles],
        "graph_breaks": [{
            "compile_ids": b.compile_ids,
            "file": b.file,
            "line": b.line,
            "reason": b.said,
            "hints": b.hints,
            "code": b.code,
            "fix": b.fix,
        } for b in trace.graph_breaks],
        "recompiles": [{
            "compile_id": str(r.compile_id),
            "rank": _rank(r.rank, ranked),
            "reasons": r.reasons,
        } for r in trace.recompiles],
    }


def rank_differences(trace: Trace) -> list[str]:
    """Where ranks compiled differently: each compile id some ranks made and others did not ("[0/1] on rank 1
    only; not on rank 0"). Empty for a single process, or ranks that all compiled the same ids."""
    ranks = [r for r in trace.ranks if r is not None]
    if len(ranks) < 2:
        return []
    made: dict[str, set[int]] = {}
    for c in trace.compiles:
        if c.rank is not None:
            made.setdefault(str(c.id), set()).add(c.rank)
    lines = []
    for cid, on in made.items():
        if len(on) < len(ranks):
            missing = [r for r in ranks if r not in on]
            lines.append(f"{cid} on rank{'s' if len(on) > 1 else ''} {', '.join(map(str, sorted(on)))} only; "
                         f"not on rank{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}")
    return lines


def summary_text(trace: Trace) -> str:
    """The same, for a person: one line per compile, then the graph breaks as actions, then the recompiles."""
    ranked = any(r is not None for r in trace.ranks)
    counts = ", ".join(plural(len(items), noun) for items, noun in ((trace.compiles, "compile"),
                                                                    (trace.graph_breaks, "graph break"),
                                                                    (trace.recompiles, "recompile")))
    lines = [f"{trace.path}: {counts}" + (f", ranks {', '.join(map(str, trace.ranks))}" if ranked else "")]
    for c in trace.compiles:
        where = f"{c.frame.function} ({c.frame.file}:{c.frame.line})" if c.frame else "?"
        rank = f"rank {c.rank} " if ranked else ""
        seconds = f" {c.seconds:.2f} s" if c.seconds is not None else ""
        hit = " cache hit" if c.cache_hit else ""
        lines.append(f"  {rank}{c.id} {where}: {c.status}{seconds}{hit} [{', '.join(graphs_of(c))}]")
    if trace.graph_breaks:
        lines.append("Graph breaks:")
    for b in trace.graph_breaks:
        hits = [f"rank {rank} {cid}" for rank, cid in b.hits] if ranked else b.compile_ids
        lines.append(f"  {b.file}:{b.line}: {b.said} ({', '.join(hits)})")
        if b.fix:
            lines.append(f"    fix: {b.fix}")
        if b.url:
            lines.append(f"    see {b.url}")
    differences = rank_differences(trace)
    if differences:
        lines.append("Ranks differ:")
        lines += [f"  {line}" for line in differences]
    if trace.recompiles:
        lines.append("Recompiles:")
    for r in trace.recompiles:
        rank = f"rank {r.rank} " if ranked else ""
        lines.append(f"  {rank}{r.compile_id}: " + "; ".join(r.reasons))
    return "\n".join(lines)
