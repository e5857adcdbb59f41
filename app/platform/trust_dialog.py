"""Ask before running a model script: opening a `.py` file runs its code with the user's rights.

The first time a file is opened (per path AND content, `pt2_viewer.core.platform.trust.TrustStore`), the user sees its
path and a clear warning and must say yes; the yes is remembered until the file changes. Without dialogs (tests,
`--screenshot`) a script runs only if it was trusted before or the caller says the user asked for it explicitly
(`trust_scripts`).

A `.pt2` is data, but one can hold code torch would run when loading it (pickled objects, modules to import); the
worker refuses such a file (core/jobs/archive_check.py) and `confirm_program` asks, listing what was found, with the
same memory per path and content.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from pt2_viewer.core.platform.trust import TrustStore

TITLE = "Run this script?"


def warning_text(path: Path) -> str:
    return (f"Opening a Python script runs its code on this computer, with your permissions:\n\n{path}\n\n"
            "PT2 Viewer runs it in a separate worker process to capture its torch.export calls, but the code can "
            "still read, change or delete your files and use the network. Run it only if you trust where it came "
            "from.\n\nYour answer is remembered until the file changes.")


def not_trusted_message(path: Path) -> str:
    return (f"'{path.name}' was not run: opening a script runs its code, and this file has not been trusted yet. "
            "Open it in the window and confirm, or pass it on the command line with --screenshot.")


def confirm_run(parent: QWidget | None, path: str | Path, store: TrustStore, *, interactive: bool,
                trust_scripts: bool = False) -> bool:
    """True if the script may run now. Asks (interactive) at most once per path and content; remembers a yes."""
    path = Path(path).expanduser().resolve()
    if trust_scripts or store.is_trusted(path):
        return True
    return interactive and _ask(parent, TITLE, warning_text(path), store, path)


def _ask(parent: QWidget | None, title: str, text: str, store: TrustStore, path: Path) -> bool:
    """Ask Yes/No (No by default); remember a yes for the file's current content."""
    answer = QMessageBox.warning(parent, title, text, QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                 QMessageBox.StandardButton.No)
    if answer != QMessageBox.StandardButton.Yes:
        return False
    store.trust(path)
    return True


PROGRAM_TITLE = "Load code from this program?"


def program_warning_text(path: Path, items: list[str]) -> str:
    shown = "\n".join(f"  • {item}" for item in items[:12]) + (f"\n  • and {len(items) - 12} more" if len(items) > 12
                                                                  else "")
    return (f"Loading this program would run code from the file, with your permissions:\n\n{path}\n\nTo load it, "
            f"PT2 Viewer would:\n{shown}\n\nA program saved by torch.export.save from plain tensors needs none of "
            "this. Say yes only if you trust where the file came from.\n\nYour answer is remembered until the file "
            "changes.")


def confirm_program(parent: QWidget | None, path: str | Path, store: TrustStore, items: list[str], *,
                    interactive: bool) -> bool:
    """True if the user trusts this `.pt2` to run the code listed in `items` (asked at most once per content)."""
    path = Path(path).expanduser().resolve()
    if store.is_trusted(path):
        return True
    return interactive and _ask(parent, PROGRAM_TITLE, program_warning_text(path, items), store, path)
