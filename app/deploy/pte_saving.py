"""Saving a `.pte` where the user wants it, with its ETRecord beside it.

Program > Lower to ExecuTorch… writes the `.pte` and its ETRecord into the job's temporary folder, which goes when the
app quits: the Lower dialog's "Save .pte As…" and File > Save Program As… on the lowered tab (or on any `.pte` tab
whose ETRecord lies beside it) write both where the user chooses. The ETRecord takes the name the `lower` command
gives it (core/deploy/lower.py `etrecord_path_for`: NAME.etrecord beside NAME.pte), which is where `numerics`, `run`,
the Numerics tab and Compare Pipeline… look for it. Each file is written atomically; nothing is overwritten unasked.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from pt2_viewer.core.deploy.lower import etrecord_path_for
from pt2_viewer.core.pte.magic import etrecord_beside
from pt2_viewer.core.util.files import write_atomically

PTE_FILTER = "ExecuTorch programs (*.pte)"


@dataclass
class LoweredFiles:
    """A `.pte` the Lower dialog made in its temporary folder, its ETRecord, and where the user saved them (None
    until saved): shared by the dialog and the lowered tab, so a save from either stops the question on closing."""

    pte: Path
    etrecord: Path | None
    saved: Path | None = None

    def unsaved(self) -> str | None:
        """What would be lost, in words; None once saved."""
        if self.saved is not None:
            return None
        return f"the lowered program {self.pte.name}" + (" and its ETRecord" if self.etrecord else "")


def pte_target(chosen: str | Path) -> Path:
    """The `.pte` to write for the name the user typed (a name without the suffix gets `.pte`)."""
    path = Path(chosen)
    return path if path.suffix == ".pte" else path.with_name(path.name + ".pte")


def save_pte(pte: str | Path, etrecord: str | Path | None, target: str | Path) -> list[Path]:
    """Copy `pte` to `target` and, when there is one, `etrecord` beside it under the name `lower` gives it; returns
    the files written. OSError when one cannot be written (the ETRecord is written first: a `.pte` saved without
    the ETRecord it was asked with never lands)."""
    target = Path(target)
    written: list[Path] = []
    if etrecord is not None:
        beside = etrecord_path_for(target)
        write_atomically(beside, lambda tmp: shutil.copyfile(etrecord, tmp), parents=False)
        written.append(beside)
    write_atomically(target, lambda tmp: shutil.copyfile(pte, tmp), parents=False)
    return [target, *written]


def saved_text(written: list[Path]) -> str:
    """The status line after a save: each file's full path."""
    pte, *rest = written
    return f"Saved {pte}" + (f" and its ETRecord {rest[0]}" if rest else "")


def ask_and_save_pte(parent: QWidget, pte: str | Path, etrecord: str | Path | None, folder: str | Path,
                     interactive: bool = True) -> tuple[list[Path], str]:
    """Ask where to save `pte` (offered in `folder` under its own name), save it with its ETRecord (`etrecord`, or
    the one beside `pte`), and return the files written and a line saying so; ([], "") when the user cancelled, and
    ([], why) when a file could not be written."""
    etrecord = etrecord if etrecord is not None else etrecord_beside(pte)
    what = "Save ExecuTorch program" + (" (its ETRecord is saved beside it)" if etrecord else "")
    chosen, _ = QFileDialog.getSaveFileName(parent, what, str(Path(folder) / Path(pte).name), PTE_FILTER)
    if not chosen:
        return [], ""
    target = pte_target(chosen)
    beside = etrecord_path_for(target)
    if etrecord is not None and beside.exists() and interactive and QMessageBox.question(
            parent, "Replace the ETRecord?",
            f"{beside.name} already exists in {beside.parent}. Replace it with the ETRecord of the program being "
            f"saved? ({target.name} is found with the ETRecord of that name beside it.)",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel) != QMessageBox.StandardButton.Yes:
        return [], ""
    try:
        written = save_pte(pte, etrecord, target)
    except OSError as e:
        return [], f"Could not save '{e.filename or target}': {e.strerror or e}. Choose a folder you can write to."
    return written, saved_text(written)


__all__ = ["LoweredFiles", "ask_and_save_pte", "pte_target", "save_pte", "saved_text"]
