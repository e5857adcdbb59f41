"""A graph of a torch.compile trace in the graph view, as a `.pt2`'s program is (core/trace/graph_program.py makes
the program from the graph's text): the same document, but nothing in it is a file to save or a program torch can
load, so Save Program As… and the Program menu (decompose, run, compare) are off, and Run and Numerics say why
(app/document/job_tabs.py).

A post-grad or Dynamo graph whose compile has provenance knows which of its nodes a kernel computes
(`kernel_nodes`, set by app/trace/opening.py): a node's right-click menu offers Show Kernel, `kernel_requested(node)`,
for the trace's tab to show that kernel in Inductor's code."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMenu

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.core.graph.ids import node_of


class CompiledGraphTab(DocumentWidget):
    kernel_requested = Signal(str)
    kernel_nodes: frozenset[str] = frozenset()

    def current_program(self) -> DocumentWidget | None:
        return None  # the Program menu's jobs load a .pt2 from disk; this graph has none

    def can_save_program(self) -> bool:
        return False

    def program_file(self) -> str | None:
        return None

    def item_menu(self, item: str) -> QMenu:
        menu = super().item_menu(item)
        node = node_of(item) if item else None
        if node is not None and node in self.kernel_nodes:
            menu.addSeparator()
            menu.addAction("Show Kernel", lambda: self.kernel_requested.emit(node))
        return menu
