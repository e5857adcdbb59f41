"""Ask before running a model script: opening a `.py` file runs its code with the user's rights.

The first time a file is opened (per path AND content, `pt2_viewer.core.platform.trust.TrustStore`), the user sees its
path and a clear warning and must say yes; the yes is remembered until the file changes, and each question says so
(a no is not remembered: the next open asks again, and the question never claims otherwise). Without dialogs (tests,
`--screenshot`) a script runs only if it was trusted before or the caller says the user asked for it explicitly
(`trust_scripts`).

A `.pt2` is data, but one can hold code torch would run when loading it (pickled objects, modules to import); the
worker refuses such a file (core/jobs/archive_check.py) and `confirm_program` asks, listing what was found, with the
same memory per path and content. Three kinds of trust, each asked on its own: a program that only names installed
modules outside the default libraries gets `confirm_imports` (remembered per module and worker Python), one that
holds pickles or expressions `confirm_program` (the whole file, `--trust`), and an AOTInductor package's compiled
code `confirm_native` (`--allow-native`).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from pt2_viewer.core.platform.trust import TrustStore

TITLE = "Run this script?"
# What each question says is kept: only a yes is (a no is asked again next time, so nobody is locked out of a file)
YES_KEPT = "A Yes is remembered until the file changes; after No, you are asked again next time."


def warning_text(path: Path) -> str:
    return (f"Opening a Python script runs its code on this computer, with your permissions:\n\n{path}\n\n"
            "PT2 Viewer runs it in a separate worker process to capture its torch.export calls, but the code can "
            "still read, change or delete your files and use the network. Run it only if you trust where it came "
            f"from.\n\n{YES_KEPT}")


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
            f"this. Say yes only if you trust where the file came from.\n\n{YES_KEPT}")


def confirm_program(parent: QWidget | None, path: str | Path, store: TrustStore, items: list[str], *,
                    interactive: bool) -> bool:
    """True if the user trusts this `.pt2` to run the code listed in `items` (asked at most once per content)."""
    path = Path(path).expanduser().resolve()
    if store.is_trusted(path):
        return True
    return interactive and _ask(parent, PROGRAM_TITLE, program_warning_text(path, items), store, path)


IMPORT_TITLE = "Import these modules?"


def import_warning_text(path: Path, python: str, items: list[str]) -> str:
    shown = "\n".join(f"  • {item}" for item in items[:12]) + (f"\n  • and {len(items) - 12} more" if len(items) > 12
                                                                  else "")
    return (f"To load this program, PT2 Viewer would import modules installed in the worker's Python ({python}) "
            f"that are not part of the libraries known to register programs' types and ops (transformers, "
            f"torchvision, torchao, ...):\n\n{path}\n\n{shown}\n\nImporting a module runs its code with your "
            "permissions. Nothing else in the file is trusted by this: its weights are still read as plain tensors."
            "\n\nA Yes is remembered for these modules and this Python; after No, you are asked again next time.")


def confirm_imports(parent: QWidget | None, path: str | Path, python: str, modules: list[str], items: list[str],
                    store: TrustStore, *, interactive: bool) -> bool:
    """True if the program may import `modules` in the worker Python `python`: remembered before, or asked now
    (a yes is remembered per module and Python, as `--allow-import MODULE` on the command line)."""
    known = store.allowed_modules(python)
    if all(any(m == k or m.startswith(k + ".") for k in known) for m in modules):
        return True
    if not interactive:
        return False
    answer = QMessageBox.warning(parent, IMPORT_TITLE, import_warning_text(Path(path), python, items),
                                 QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                 QMessageBox.StandardButton.No)
    if answer != QMessageBox.StandardButton.Yes:
        return False
    store.allow_modules(python, modules)
    return True


NATIVE_TITLE = "Run the compiled code in this package?"


def native_warning_text(path: Path) -> str:
    return (f"This AOTInductor package holds compiled code (a shared library):\n\n{path}\n\nLoading it runs that "
            "code on this computer, with your permissions, as any program you start would. Say yes only if you "
            f"trust where the file came from.\n\n{YES_KEPT}")


def confirm_native(parent: QWidget | None, path: str | Path, store: TrustStore, *, interactive: bool) -> bool:
    """True if the user lets this package's compiled code run (`--allow-native`); asked once per content."""
    path = Path(path).expanduser().resolve()
    if store.native_allowed(path):
        return True
    if not interactive:
        return False
    answer = QMessageBox.warning(parent, NATIVE_TITLE, native_warning_text(path),
                                 QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                 QMessageBox.StandardButton.No)
    if answer != QMessageBox.StandardButton.Yes:
        return False
    store.allow_native(path)
    return True
