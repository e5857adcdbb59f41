"""A report for a `.pt2`: each program's graph (core/report/graph_data.py), signature, symbol ranges and guards,
read without torch like everything else that views an archive."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.graph.summary import signature_rows
from pt2_viewer.core.layout.service import LayoutService
from pt2_viewer.core.model.expr import range_text
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.report.graph_data import graph_data
from pt2_viewer.core.report.page import ReportPage
from pt2_viewer.core.util.words import plural


def program_section(program: Program, service: LayoutService | None = None, name: str | None = None) -> dict[str, Any]:
    """One program as the page's data: graph, signature rows, symbols with ranges, guards."""
    sig = [{"direction": r.direction, "name": r.name, "kind": r.kind, "target": r.target,
            "type": " ".join(x for x in (r.dtype, r.shape) if x)} for r in signature_rows(program, program.graph)]
    symbols = [{"name": s.name, "range": range_text(s.min, s.max), "sources": list(s.sources)} for s in program.symbols]
    known = {s["name"] for s in symbols}
    symbols += [{"name": k, "range": range_text(lo, hi), "sources": []}
                for k, (lo, hi) in program.range_constraints.items() if k not in known]
    return {"name": name or program.name, "graph": graph_data(program, service).as_json(), "signature": sig,
            "symbols": symbols, "guards": list(program.guards_code)}


def archive_page(archive: Archive, service: LayoutService | None = None) -> ReportPage:
    programs = [program_section(p, service) for p in archive.programs]
    nodes = sum(p.node_count for p in archive.programs)
    torch = archive.programs[0].torch_version if archive.programs else ""
    subtitle = f"{plural(len(programs), 'program')}, {plural(nodes, 'node')}" + (f", torch {torch}" if torch else "")
    return ReportPage(title=Path(archive.path).name, subtitle=subtitle, programs=programs)
