"""The "Apply to file" confirmation: the verified diff, whole and readable, what it narrows, and two buttons. Nothing
is written unless the user presses "Write to file" (the panel keeps the original as NAME.py.orig)."""
from __future__ import annotations

import html

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from pt2_viewer.app.panels import fixed_font


class ApplyDialog(QDialog):
    """Show one verified fix as a diff and ask before writing it to the user's file."""

    def __init__(self, name: str, diff: str, narrows: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Apply to file: {name}")
        shown = html.escape(name)  # one file's name, or several joined with "and"
        kept = (f"The original is kept as <b>{shown}.orig</b>" if " and " not in name
                else "Each file's original is kept beside it as <b>NAME.orig</b>")
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
