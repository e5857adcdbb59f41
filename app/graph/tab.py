"""What the main window asks of any tab (a program's document, a script's tab, a comparison), so it needs no
`isinstance` to enable a menu entry, find the graph a key acts on, save a program, or close a tab.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pt2_viewer.app.graph.document import DocumentWidget


class DocumentTab(Protocol):
    def current_program(self) -> DocumentWidget | None:
        """The program the Program menu acts on (decompose, run, compare with): None when the tab shows none."""
        ...

    def graphs(self) -> list[DocumentWidget]:
        """The graphs the View menu may act on, the one to use without focus first (a comparison has two)."""
        ...

    def can_save_program(self) -> bool:
        """Whether File > Save Program As… applies to this tab."""
        ...

    def program_file(self) -> str | None:
        """The `.pt2` that Save Program As… copies; None when there is nothing to save yet."""
        ...

    def can_save_decomposed(self) -> bool:
        """Whether the tab holds a decomposed program to save (Program > Save Decomposed…)."""
        ...

    def save_decomposed_dialog(self) -> None:
        """Ask where, and save the decomposed program."""
        ...

    def release(self) -> None:
        """The tab is closing: stop its jobs, remove the temporary folders only it used."""
        ...


__all__ = ["DocumentTab"]
