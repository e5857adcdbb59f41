"""A horizontal bar chart of op counts, painted with QPainter (QtCharts is not part of PySide6-Essentials).

One row per op, most frequent first: the op's short name, a bar in the op's node colour scaled to the largest count,
and the count. Clicking a row emits `op_clicked` with the op's full name (`aten.linear.default`).
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.panels import fixed_font
from pt2_viewer.core.graph.summary import OpCount
from pt2_viewer.core.util.words import plural

LABEL_MAX_PX = 200
ROW_GAP = 4
MARGIN = 6


class OpHistogram(QWidget):
    op_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts: list[OpCount] = []
        self.setFont(fixed_font())
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def set_counts(self, counts: list[OpCount]) -> None:
        self.counts = list(counts)
        self.setFixedHeight(self.sizeHint().height())
        self.update()

    def row_height(self) -> int:
        return QFontMetrics(self.font()).height() + ROW_GAP

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(320, 2 * MARGIN + self.row_height() * max(1, len(self.counts)))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(200, self.sizeHint().height())

    def row_at(self, y: float) -> int | None:
        row = int((y - MARGIN) // self.row_height())
        return row if 0 <= row < len(self.counts) else None

    def row_rect(self, row: int) -> QRectF:
        return QRectF(0, MARGIN + row * self.row_height(), self.width(), self.row_height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fm = QFontMetrics(self.font())
        text = self.palette().color(QPalette.ColorRole.Text)
        if not self.counts:
            p.setPen(text)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No operator calls")
            return
        label_w = min(LABEL_MAX_PX, max(fm.horizontalAdvance(c.short) for c in self.counts)) + 8
        count_w = fm.horizontalAdvance(str(self.counts[0].count)) + 8
        bar_x = MARGIN + label_w
        bar_room = max(10, self.width() - bar_x - count_w - MARGIN)
        top = max(c.count for c in self.counts)
        h = self.row_height()
        for i, c in enumerate(self.counts):
            y = MARGIN + i * h
            label = fm.elidedText(c.short, Qt.TextElideMode.ElideMiddle, label_w - 6)
            p.setPen(text)
            p.drawText(QRectF(MARGIN, y, label_w - 8, h), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       label)
            width = max(2.0, bar_room * c.count / top)
            fill = theme.kind_color(c.kind)
            p.setPen(fill.darker(140))
            p.setBrush(fill)
            p.drawRoundedRect(QRectF(bar_x, y + 2, width, h - ROW_GAP), 2, 2)
            p.setPen(text)
            p.drawText(QRectF(bar_x + width + 4, y, count_w, h), Qt.AlignmentFlag.AlignVCenter, str(c.count))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        row = self.row_at(event.position().y())
        self.setToolTip(f"{self.counts[row].op}: {plural(self.counts[row].count, 'call')} (click to highlight)"
                        if row is not None else "")
        self.setCursor(Qt.CursorShape.PointingHandCursor if row is not None else Qt.CursorShape.ArrowCursor)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        row = self.row_at(event.position().y())
        if row is not None and event.button() == Qt.MouseButton.LeftButton:
            self.op_clicked.emit(self.counts[row].op)
