"""Read archives off the GUI thread, so opening a big `.pt2` never blocks the window's event loop."""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from core.document_model import DocumentModel
from core.errors import ArchiveError
from core.program import Archive
from core.reader import read_archive


class ArchiveLoader(QObject):
    """`load(path)` reads in a thread; `loaded(path, archive)` or `failed(path, message)` arrive on the GUI thread.
    `build(path, archive, program)` then builds the document model (indexes, module tree, shapes) in a thread too:
    `built(path, model)`. Python threads share the GIL but switch every few ms, so the window keeps painting."""

    loaded = Signal(str, object)
    failed = Signal(str, str)
    built = Signal(str, object)

    def build(self, path: str, archive: Archive, program: str) -> None:
        threading.Thread(target=self._build, args=(path, archive, program), daemon=True, name=f"index {path}").start()

    def _build(self, path: str, archive: Archive, program: str) -> None:
        try:
            model = DocumentModel(archive, archive.program(program))
        except Exception as e:  # a bug here must not take the window down; say what happened
            self.failed.emit(path, f"Could not index '{path}': internal error {type(e).__name__}: {e}")
            return
        self.built.emit(path, model)

    @staticmethod
    def warm(model: DocumentModel) -> None:
        """Once the graph is on screen, parse every shape in a thread so the Symbols panel opens at once."""

        def run() -> None:
            try:
                model.level.index.symbol_users  # noqa: B018
            except Exception:  # the panel computes (and reports) it itself when shown
                pass

        threading.Thread(target=run, daemon=True, name="warm shapes").start()

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
