"""What a view of one program is given: the program, the graph level now shown (its top graph or a HOP subgraph),
that graph's index, and the archive it was read from. One value, so every side panel takes the same argument and
the document hands each the same thing (app/panels/panel.py).
"""
from __future__ import annotations

import msgspec

from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.model.program import Archive, Graph, Program


class ProgramContext(msgspec.Struct, frozen=True):
    """What a side panel needs to show one graph of a program."""

    program: Program
    graph: Graph  # the graph shown: program.graph, or a subgraph reached through the breadcrumb
    index: GraphIndex  # of `graph`
    archive: Archive | None = None


__all__ = ["ProgramContext"]
