"""The legend of the overlay shown on a graph: its name, what its colours mean (a scale's two ends, or each
category), and a close button that brings back the kind colours. A translucent box in the view's bottom-left
corner (the minimap has the bottom-right; the program's start and group titles are at the top);
a view of a core `Overlay` (core/graph/overlays.py), colours from app/theme.py."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.qt import tool_button
from pt2_viewer.core.graph.overlays import Overlay

ROW = 16
PAD = 8
SWATCH = 11
MAX_WIDTH = 300
WRAP = Qt.TextFlag.TextWordWrap | Qt.TextFlag.TextWrapAnywhere


class OverlayLegend(QWidget):
    closed = Signal()  # the user closed the overlay (the × button)

    def __init__(self, view: QAbstractScrollArea) -> None:
        super().__init__(view)
        self.view = view
        self.overlay: Overlay | None = None
        self.group_note = ""
        self.note_heights: list[float] = []
        self.close_button = tool_button("×", "Hide the overlay: kind colours again", auto_raise=True, parent=self)
        self.close_button.clicked.connect(self.closed)
        view.viewport().installEventFilter(self)
        self.setVisible(False)

    def set_overlay(self, overlay: Overlay | None, group_note: str = "") -> None:
        """Show `overlay`'s legend; `group_note` says how the collapsed groups shown aggregate (sum, max) and
        their range. Every line is whole: a note wider than the box wraps (a long first divergence's name)."""
        self.overlay = overlay
        self.group_note = group_note
        if overlay is None:
            self.setVisible(False)
            return
        fm = QFontMetricsF(self.font())
        texts = [f"Overlay: {overlay.name}", *(i.label for i in overlay.legend), *self.notes()]
        if overlay.is_scale and len(overlay.legend) >= 2:
            texts.append(f"{overlay.legend[0].label}    {overlay.legend[1].label}")
        width = min(MAX_WIDTH, max(fm.horizontalAdvance(t) for t in texts) + 2 * PAD + SWATCH + 30)
        inner = width - 2 * PAD
        self.note_heights = [max(ROW, self._wrapped(fm, n, inner) + 2) for n in self.notes()]
        rows = 1 + (1 if overlay.is_scale else len(overlay.legend))
        self.resize(int(width), int(PAD * 2 + ROW * rows + sum(self.note_heights) + (10 if overlay.is_scale else 0)))
        self.close_button.setGeometry(self.width() - 22, 2, 20, 18)
        self.place()
        self.setVisible(True)
        self.raise_()
        self.update()

    def notes(self) -> list[str]:
        o = self.overlay
        return [*(o.notes if o is not None else []), *([self.group_note] if self.group_note else [])]

    @staticmethod
    def _wrapped(fm: QFontMetricsF, text: str, width: float) -> float:
        return fm.boundingRect(QRectF(0, 0, width, 10_000), WRAP, text).height()

    def place(self) -> None:
        v = self.view.viewport().geometry()
        self.move(v.left() + 10, v.bottom() - self.height() - 10 + 1)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.overlay is not None:
            self.place()
        return False

    def paintEvent(self, event) -> None:
        o = self.overlay
        if o is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QPen(theme.graph_color("minimap_frame"), 1))
        p.setBrush(theme.graph_color("minimap_back"))
        p.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5)
        text = theme.text_color()
        width = self.width() - 2 * PAD
        y: float = PAD
        f = self.font()
        f.setBold(True)
        p.setFont(f)
        p.setPen(text)
        p.drawText(QRectF(PAD, y, width - 20, ROW), Qt.AlignmentFlag.AlignVCenter, f"Overlay: {o.name}")
        p.setFont(self.font())
        y += ROW
        if o.is_scale:
            bar = QRectF(PAD, y + 2, width, 9)
            grad = QLinearGradient(bar.topLeft(), bar.topRight())
            for k in range(5):
                grad.setColorAt(k / 4, theme.overlay_scale_color(k / 4))
            p.fillRect(bar, grad)
            y += 11
            low, high = (o.legend + [None, None])[:2]
            if low is not None:
                p.drawText(QRectF(PAD, y, width, ROW), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                           low.label)
            if high is not None:
                p.drawText(QRectF(PAD, y, width, ROW), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                           high.label)
            y += ROW
        else:
            for item in o.legend:
                p.fillRect(QRectF(PAD, y + (ROW - SWATCH) / 2, SWATCH, SWATCH),
                           theme.overlay_category_color(item.category or 0))
                p.drawText(QRectF(PAD + SWATCH + 6, y, width - SWATCH - 6, ROW), Qt.AlignmentFlag.AlignVCenter,
                           item.label)
                y += ROW
        p.setPen(theme.graph_color("edge_label"))
        for note, h in zip(self.notes(), self.note_heights):
            p.drawText(QRectF(PAD, y, width, h), WRAP | Qt.AlignmentFlag.AlignVCenter, note)
            y += h
