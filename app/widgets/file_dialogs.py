"""File dialogs that open in the folder of the program the user is looking at, not in the working folder.

A file a dialog asks for (a decomposition table, a `.pte` lowered from the program, an overlay's JSON, where to save a
report) is most often beside the program: every dialog of a program's views starts there (`start_folder`), and a save
dialog offers its name there. Where no program is known, or its folder is gone, Qt's own start (the working folder)
stays.
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

PathLike = str | os.PathLike[str]


def start_folder(program: PathLike | None) -> str:
    """The folder holding `program` (a file; a folder program, an AOTInductor package unpacked, is its own parent's
    child too), or "" (Qt's default) when there is none or it is gone."""
    if not program:
        return ""
    folder = Path(program).expanduser().absolute().parent
    return str(folder) if folder.is_dir() else ""


def open_file(parent: QWidget | None, title: str, program: PathLike | None, kinds: str = "") -> str | None:
    """Ask for an existing file, starting in `program`'s folder; None when cancelled."""
    path, _ = QFileDialog.getOpenFileName(parent, title, start_folder(program), kinds)
    return path or None


def open_folder(parent: QWidget | None, title: str, beside: PathLike | None) -> str | None:
    """Ask for an existing folder, starting where `beside` (a file the user just chose) is; None when cancelled."""
    path = QFileDialog.getExistingDirectory(parent, title, start_folder(beside))
    return path or None


def save_file(parent: QWidget | None, title: str, program: PathLike | None, name: str, kinds: str = "") -> str | None:
    """Ask where to save `name` (a file name, or a path whose folder is kept when it exists), offered in
    `program`'s folder; None when cancelled."""
    given = Path(name).expanduser()
    folder = str(given.parent) if given.is_absolute() and given.parent.is_dir() else start_folder(program)
    path, _ = QFileDialog.getSaveFileName(parent, title, str(Path(folder) / given.name) if folder else given.name,
                                          kinds)
    return path or None


__all__ = ["open_file", "open_folder", "save_file", "start_folder"]
