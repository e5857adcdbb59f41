"""What the main window asks of any tab (a program's document, a script's tab, a comparison, a package's text), so it
needs no `isinstance` to enable a menu entry, find the graph a key acts on, save a program, or close a tab (asking
first when the tab holds something the user made and has not saved: `unsaved`).

`DocumentTab` is a base class, not a convention: the window adds only `DocumentTab`s to its tab bar
(`MainWindow.add_tab`) and reads them back with an `isinstance` check, so a widget that does not keep the contract
is a type error where it is added, not an `AttributeError` when a menu opens. The defaults say "nothing to act on";
each kind of tab overrides what it offers.

Each tab owns its status text: it emits `status(str)`, keeps the last one in `status_text`, and the window shows it
only while the tab is the current one (and again when the user comes back to it).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from pt2_viewer.app.document.widget import DocumentWidget


class DocumentTab(QWidget):
    """One tab of the main window. `status(str)`: a line for the status bar while this tab is shown."""

    status = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status_text = ""
        self.status.connect(self._keep_status)

    def _keep_status(self, text: str) -> None:
        self.status_text = text

    def source_file(self) -> str | None:
        """The file this tab shows (an archive, a script); None when it shows no one file. `--screenshot` checks
        that the tab on screen shows the file it was asked for."""
        return None

    def current_program(self) -> DocumentWidget | None:
        """The program the Program menu acts on (decompose, run, compare with): None when the tab shows none."""
        return None

    def graphs(self) -> list[DocumentWidget]:
        """The graphs the View menu may act on, the one to use without focus first (a comparison has two)."""
        return []

    def can_save_program(self) -> bool:
        """Whether File > Save Program As… applies to this tab."""
        return False

    def program_file(self) -> str | None:
        """The `.pt2` (or `.pte`, with its ETRecord) that Save Program As… copies; None when there is nothing to save
        yet."""
        return None

    def program_saved(self, path: str) -> None:
        """Save Program As… wrote this tab's program to `path` (a tab holding unsaved work stops asking)."""

    def unsaved(self) -> str | None:
        """What closing this tab would lose, in words for the question asked first ("the lowered program
        m.xnnpack.pte and its ETRecord"); None when the tab holds nothing the user made and has not saved."""
        return None

    def can_save_decomposed(self) -> bool:
        """Whether the tab holds a decomposed program to save (Program > Save Decomposed…)."""
        return False

    def save_decomposed_dialog(self) -> None:
        """Ask where, and save the decomposed program (only called when `can_save_decomposed`)."""

    def release(self) -> None:
        """The tab is closing: stop its jobs, remove the temporary folders only it used."""


class TextTab(DocumentTab):
    """A file the viewer can describe but not draw (an AOTInductor package: compiled code, no program graph): its
    text, read-only. Save Program As… copies the file."""

    def __init__(self, path: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.text = QTextBrowser()
        self.text.setPlainText(text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)

    def source_file(self) -> str | None:
        return self.path

    def can_save_program(self) -> bool:
        return True

    def program_file(self) -> str | None:
        return self.path if Path(self.path).is_file() else None


__all__ = ["DocumentTab", "TextTab"]
