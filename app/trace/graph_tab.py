"""A graph of a torch.compile trace in the graph view, as a `.pt2`'s program is (core/trace/graph_program.py makes
the program from the graph's text): the same document, but nothing in it is a file to save or a program torch can
load, so Save Program As… and the Program menu (decompose, run, compare) are off, and Run and Numerics say why
(app/document/job_tabs.py)."""
from __future__ import annotations

from pt2_viewer.app.document.widget import DocumentWidget


class CompiledGraphTab(DocumentWidget):
    def current_program(self) -> DocumentWidget | None:
        return None  # the Program menu's jobs load a .pt2 from disk; this graph has none

    def can_save_program(self) -> bool:
        return False

    def program_file(self) -> str | None:
        return None
