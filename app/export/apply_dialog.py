"""The "Apply to file" confirmation: the verified diff, whole and readable, what it narrows, the name each original
will be kept under (NAME.py.orig, or NAME.py.orig2 when that is taken: core/export/fixes/apply.py decides it for the
words and the writer alike), and two buttons. Nothing is written unless the user presses "Write to file"."""
from __future__ import annotations

import html
import os

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from pt2_viewer.app.panels import fixed_font
from pt2_viewer.core.export.fixes.apply import PatchError, Written, planned_backups


class ApplyDialog(QDialog):
    """Show one verified fix as a diff and ask before writing it to the user's file."""

    def __init__(self, name: str, diff: str, backups: list[Written], narrows: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Apply to file: {name}")
        shown = html.escape(name)  # one file's name, or several joined with "and"
        kept = kept_text(backups)
        self.text = QLabel(f"Write this fix to <b>{shown}</b>? It was verified: with it, the export call succeeds. "
                           f"{kept}, and the script is exported again at once."
                           + (f"<br><i>Note: {html.escape(narrows)}.</i>" if narrows else ""))
        self.text.setWordWrap(True)
        self.diff = QPlainTextEdit(diff, readOnly=True)
        self.diff.setFont(fixed_font())
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        lines = max(6, min(30, diff.count("\n") + 2))
        self.diff.setMinimumSize(640, self.diff.fontMetrics().lineSpacing() * lines + 12)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.write = buttons.addButton("Write to file", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.diff, 1)
        layout.addWidget(buttons)

    @classmethod
    def for_fix(cls, name: str, diff: str, base: str | os.PathLike[str], narrows: str = "",
                parent: QWidget | None = None) -> ApplyDialog:
        """The confirmation for `diff` applied under `base` (the script's folder), naming each backup as the writer
        will (`planned_backups`)."""
        try:
            backups = planned_backups(diff, base)
        except PatchError:
            backups = []  # the write itself says why the diff does not apply
        return cls(name, diff, backups, narrows, parent)


def kept_text(backups: list[Written]) -> str:
    """Where the originals will be kept, by the names the writer will use ("The original is kept as m.py.orig2")."""
    names = [f"<b>{html.escape(w.original.name)}</b>" for w in backups]
    if len(names) == 1:
        return f"The original is kept as {names[0]}"
    return f"The originals are kept beside them as {', '.join(names[:-1])} and {names[-1]}" if names else \
        "The original is kept beside it"
