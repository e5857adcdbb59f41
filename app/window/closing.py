"""The question before a tab or the window closes on something the user made and has not saved: a `.pte` lowered in
the window, a decomposed program (each tab says what it would lose: `DocumentTab.unsaved`). Save asks where and
saves it, Discard closes, Cancel keeps everything open. A window without dialogs (`--screenshot`, tests) asks
nothing."""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtWidgets import QMessageBox, QTabWidget, QWidget

from pt2_viewer.app.document.tab import DocumentTab

TITLE = "Save before closing?"
Button = QMessageBox.StandardButton


class Window(Protocol):
    """What the question needs of the main window."""

    tabs: QTabWidget
    interactive: bool

    def save_program_dialog(self) -> None: ...


def question_text(what: str, quitting: bool) -> str:
    """The question's words: what would be lost, and where it is now."""
    closing = "Quitting" if quitting else "Closing this tab"
    has, it_is, it = ("have", "they are", "them") if " and " in what else ("has", "it is", "it")  # a .pte, its ETRecord
    return (f"{what[0].upper()}{what[1:]} {has} not been saved: {it_is} only in the app's temporary folder. "
            f"{closing} loses {it}.\n\nSave {it} where you choose, or discard {it}?")


def may_close(window: Window, parent: QWidget, tabs: list[DocumentTab], quitting: bool = False) -> bool:
    """Ask about each of `tabs` holding unsaved work (shown first, so the user sees which); True when all may
    close: saved, or discarded. Cancel, or a save not made, keeps them open."""
    if not window.interactive:
        return True
    for tab in tabs:
        what = tab.unsaved()
        if what is None:
            continue
        window.tabs.setCurrentWidget(tab)
        answer = QMessageBox.question(parent, TITLE, question_text(what, quitting),
                                      Button.Save | Button.Discard | Button.Cancel, Button.Save)
        if answer == Button.Cancel:
            return False
        if answer == Button.Save:
            _save(window, tab)()
            if tab.unsaved() is not None:  # the save dialog was cancelled, or the file could not be written
                return False
    return True


def _save(window: Window, tab: DocumentTab) -> Callable[[], None]:
    """How `tab` saves what it would lose: its decomposed program, else its program (Save Program As…)."""
    return tab.save_decomposed_dialog if tab.can_save_decomposed() else window.save_program_dialog


__all__ = ["may_close", "question_text"]
