"""The bar that goes through several nodes one at a time: "‹  conv2d: 2 of 7  ›  ×" at the top right of the graph,
for Find's matches, an op-diff row's nodes and Numerics rows (core/graph/navigation.Hits). Previous and next reveal
the node and zoom to it (F3 and Shift+F3 too); × puts it away, and with it every mark (app/document/tools.py
`put_away`). A child of the view, floating over the graph's top right corner (the legend and the minimap sit beside
the graph instead)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QAbstractScrollArea, QFrame, QHBoxLayout, QLabel

from pt2_viewer.app.qt import tool_button
from pt2_viewer.core.graph.navigation import Hits


class StepBar(QFrame):
    moved = Signal(int)  # -1 previous, +1 next
    closed = Signal()

    def __init__(self, view: QAbstractScrollArea) -> None:
        super().__init__(view)
        self.view = view
        self.setAutoFillBackground(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 1, 2, 1)
        row.setSpacing(2)
        self.previous = tool_button("‹", "Previous (Shift+F3)", auto_raise=True)
        self.label = QLabel()
        self.next = tool_button("›", "Next (F3)", auto_raise=True)
        self.close_button = tool_button("×", "Stop going through these nodes", auto_raise=True)
        for w in (self.previous, self.label, self.next, self.close_button):
            row.addWidget(w)
        self.previous.clicked.connect(lambda: self.moved.emit(-1))
        self.next.clicked.connect(lambda: self.moved.emit(1))
        self.close_button.clicked.connect(self.closed)
        view.viewport().installEventFilter(self)
        self.setVisible(False)

    def show_hits(self, hits: Hits | None) -> None:
        if hits is None or not hits.nodes:
            self.setVisible(False)
            return
        self.label.setText(hits.text())
        self.label.setToolTip(hits.current or "")
        several = len(hits.nodes) > 1 or hits.current is None  # marked nodes: next goes to the first
        self.previous.setEnabled(several)
        self.next.setEnabled(several)
        self.adjustSize()
        self.place()
        self.setVisible(True)
        self.raise_()

    def place(self) -> None:
        v = self.view.viewport().geometry()
        self.move(v.right() - self.width() - 8, v.top() + 30)  # under the breadcrumb line

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self.place()
        return False
