"""The lowered tabs: a program beside the `.pte` that Program > Lower to ExecuTorch… made from it, or beside the `.onnx`
that Program > Lower to ONNX… made (source | ONNX in the pipeline view, `LoweredOnnxView`).

The `.pte` and its ETRecord live in the lower job's temporary folder until the user saves them, so this tab, unlike
other comparisons, has a program to save: File > Save Program As… writes the `.pte` with its ETRecord beside it
(app/deploy/pte_saving.py), and closing the tab or the window before that asks first (`unsaved`). The files are
shared with the Lower dialog, whose "Save .pte As…" counts as a save here too (and "Save .onnx As…" for an `.onnx`).
"""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.app.compare.chain import ChainView
from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.deploy.onnx_lower_dialog import OnnxFile
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


class LoweredOnnxView(ChainView):
    """Source | ONNX, the `.onnx` (`file`) made by the Lower to ONNX dialog and maybe still unsaved."""

    file: OnnxFile | None = None

    def can_save_program(self) -> bool:
        return self.file is not None

    def program_file(self) -> str | None:
        return str(self.file.path) if self.file is not None and self.file.path.is_file() else None

    def program_saved(self, path: str) -> None:
        if self.file is not None:
            self.file.saved = Path(path)

    def unsaved(self) -> str | None:
        return self.file.unsaved() if self.file is not None else None


__all__ = ["LoweredOnnxView", "LoweredView"]
