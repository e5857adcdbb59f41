"""The graph levels' breadcrumb above a document's graph (the program › a HOP's subgraph › ...): each level but the
shown one is a button that goes back to it (`level_clicked(depth)`)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


class Breadcrumb(QWidget):
    level_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(2)

    def set_levels(self, titles: list[str]) -> None:
        while self.row.count():
            taken = self.row.takeAt(0)
            w = taken.widget() if taken is not None else None
            if w is not None:
                w.deleteLater()
        for i, title in enumerate(titles):
            if i:
                self.row.addWidget(QLabel("›"))
            b = QToolButton()
            b.setText(title)
            b.setAutoRaise(True)
            b.setEnabled(i < len(titles) - 1)
            b.clicked.connect(lambda _=False, i=i: self.level_clicked.emit(i))
            self.row.addWidget(b)
        self.row.addStretch(1)
