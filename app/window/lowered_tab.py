"""The lowered tab: a program beside the `.pte` that Program > Lower to ExecuTorch… made from it.

The `.pte` and its ETRecord live in the lower job's temporary folder until the user saves them, so this tab, unlike
other comparisons, has a program to save: File > Save Program As… writes the `.pte` with its ETRecord beside it
(app/deploy/pte_saving.py), and closing the tab or the window before that asks first (`unsaved`). The files are
shared with the Lower dialog, whose "Save .pte As…" counts as a save here too.
"""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.deploy.pte_saving import LoweredFiles


class LoweredView(CompareView):
    """A comparison of a program and its lowered `.pte` whose files (`files`) may still be unsaved."""

    files: LoweredFiles | None = None

    def can_save_program(self) -> bool:
        return self.files is not None

    def program_file(self) -> str | None:
        return str(self.files.pte) if self.files is not None and self.files.pte.is_file() else None

    def program_saved(self, path: str) -> None:
        if self.files is not None:
            self.files.saved = Path(path)

    def unsaved(self) -> str | None:
        return self.files.unsaved() if self.files is not None else None


__all__ = ["LoweredView"]
