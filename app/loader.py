"""Read archives off the GUI thread, so opening a big `.pt2` never blocks the window's event loop."""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from core.errors import ArchiveError
from core.reader import read_archive


class ArchiveLoader(QObject):
    """`load(path)` reads in a thread; `loaded(path, archive)` or `failed(path, message)` arrive on the GUI thread."""

    loaded = Signal(str, object)
    failed = Signal(str, str)

    def load(self, path: str) -> None:
        threading.Thread(target=self._run, args=(path,), daemon=True, name=f"read {path}").start()

    def _run(self, path: str) -> None:
        try:
            archive = read_archive(path)
        except ArchiveError as e:
            self.failed.emit(path, str(e))
        except Exception as e:  # a reader bug must not take the window down; say what happened
            self.failed.emit(path, f"Could not read '{path}': internal error {type(e).__name__}: {e}")
        else:
            self.loaded.emit(path, archive)
