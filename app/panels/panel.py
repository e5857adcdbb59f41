"""The one contract of a document's side panels, so the document widget wires every panel the same way (no
`hasattr` or `isinstance`): each is given a `ProgramContext` (core/graph/program_context.py), follows the
selection made elsewhere, and says what the user asked for through the same four signals (a panel that never asks
for something simply never emits that signal).
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from pt2_viewer.core.graph.ids import node_of
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.model.program import Archive, Graph, Program


class Panel(QWidget):
    """A view of one program beside its graph. Subclasses implement `set_context` and `show_node`."""

    node_requested = Signal(str)  # reveal and select this node
    nodes_highlighted = Signal(list)  # mark these nodes in the graph
    subgraph_requested = Signal(str, str)  # go into this HOP node's subgraph
    source_requested = Signal(str, int)  # open this file at this 1-based line

    def set_context(self, context: ProgramContext) -> None:
        """Show this program and graph level (called when the panel is first shown and after a level change)."""
        raise NotImplementedError

    def show_node(self, name: str | None) -> None:
        """The selection changed elsewhere: reflect it without emitting anything."""
        raise NotImplementedError

    def show_item(self, item: str | None) -> None:
        """The selection, an item id (core/graph/ids.py: a node or a module group), changed elsewhere. A panel about
        nodes shows the node, or nothing for a group; Details shows a group too."""
        self.show_node(node_of(item))

    def set_program(self, program: Program, graph: Graph, index: GraphIndex, archive: Archive | None = None) -> None:
        """`set_context` for callers holding the parts."""
        self.set_context(ProgramContext(program, graph, index, archive))


__all__ = ["Panel", "ProgramContext"]
