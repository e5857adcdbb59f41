"""The legend of the overlay shown on a graph: its name, what its colours mean (a scale's two ends, or each
category), its notes, and a close button that brings back the kind colours. A strip below the graph, never over it
(issue 43 §4: a box in the corner covered nodes, and a narrow pane broke its words, "14 c/hanges", "32.0 M/B"): the
view gives up that much of its height (`GraphView.reserve_bottom`), the entries flow across the strip's width onto
as many rows as they need, each whole, and a note wraps between words. A view of a core `Overlay`
(core/graph/overlays.py), colours from app/theme.py."""
from __future__ import annotations

import msgspec
from PySide6.QtCore import QEvent, QObject, QRectF, Qt, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.graph.view import GraphView
from pt2_viewer.app.qt import tool_button
from pt2_viewer.core.graph.overlays import LegendItem, Overlay

ROW = 18
PAD = 6
GAP = 14  # between entries on a row
SWATCH = 11
SCALE_W = 110  # the gradient of a scale
CLOSE_W = 24
WRAP = Qt.TextFlag.TextWordWrap  # between words only: never "c/hanges"


class Entry(msgspec.Struct, frozen=True):
    """One thing the strip draws: the title, a category (swatch and label), a scale (low, gradient, high) or a note;
    `rect` is where, in the strip."""

    kind: str  # "title", "category", "scale", "note"
    text: str
    rect: QRectF
    item: LegendItem | None = None
    high: str = ""


class OverlayLegend(QWidget):
    closed = Signal()  # the user closed the overlay (the × button)

    def __init__(self, view: GraphView) -> None:
        super().__init__(view)
        self.view = view
        self.overlay: Overlay | None = None
        self.group_note = ""
        self.entries: list[Entry] = []
        self.close_button = tool_button("×", "Hide the overlay: kind colours again", auto_raise=True, parent=self)
        self.close_button.clicked.connect(self.closed)
        view.installEventFilter(self)
        view.viewport().installEventFilter(self)  # a scroll bar coming or going moves the graph's bottom edge
        self.setVisible(False)

    def set_overlay(self, overlay: Overlay | None, group_note: str = "") -> None:
        """Show `overlay`'s legend; `group_note` says how the collapsed groups shown aggregate (sum, max) and
        their range. Every line is whole: a note wider than the strip wraps between words."""
        self.overlay = overlay
        self.group_note = group_note
        if overlay is None:
            self.entries = []
            self.setVisible(False)
            self.view.reserve_bottom(0)
            return
        self.lay_out()
        self.setVisible(True)
        self.raise_()
        self.update()

    def notes(self) -> list[str]:
        o = self.overlay
        return [*(o.notes if o is not None else []), *([self.group_note] if self.group_note else [])]

    def lay_out(self) -> None:
        """The entries flowed across the view's width, the strip as tall as they need, the view's graph above it."""
        o = self.overlay
        if o is None:
            return
        frame = self.view.frameWidth()
        width = max(self.view.width() - 2 * frame - self.view.verticalScrollBar().sizeHint().width(), 120)
        fm, bold = QFontMetricsF(self.font()), QFontMetricsF(self._bold())
        entries: list[Entry] = []
        x, y = float(PAD), float(PAD)
        right = width - PAD - CLOSE_W

        def put(kind: str, text: str, w: float, **more: object) -> None:
            nonlocal x, y
            if x > PAD and x + w > right:
                x, y = float(PAD), y + ROW
            entries.append(Entry(kind, text, QRectF(x, y, w, ROW), **more))  # type: ignore[arg-type]
            x += w + GAP

        title = f"Overlay: {o.name}"
        put("title", title, bold.horizontalAdvance(title))
        if o.is_scale and len(o.legend) >= 2:
            low, high = o.legend[0].label, o.legend[1].label
            put("scale", low, fm.horizontalAdvance(low) + SCALE_W + fm.horizontalAdvance(high) + 12, high=high)
        else:
            for item in o.legend:
                put("category", item.label, SWATCH + 5 + fm.horizontalAdvance(item.label), item=item)
        y += ROW
        for note in self.notes():
            h = max(ROW, fm.boundingRect(QRectF(0, 0, width - 2 * PAD, 10_000), WRAP, note).height() + 2)
            entries.append(Entry("note", note, QRectF(PAD, y, width - 2 * PAD, h)))
            y += h
        self.entries = entries
        height = int(y + PAD)
        self.view.reserve_bottom(height)
        port = self.view.viewport().geometry()
        self.setGeometry(port.left(), port.bottom() + 1, int(width), height)
        self.close_button.setGeometry(int(width) - CLOSE_W, 2, 20, 18)

    def _bold(self) -> QFont:
        f = QFont(self.font())
        f.setBold(True)
        return f

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.overlay is not None:
            self.lay_out()
        return False

    def paintEvent(self, event) -> None:
        if self.overlay is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QPen(theme.graph_color("minimap_frame"), 1))
        p.setBrush(theme.graph_color("minimap_back"))
        p.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        text = theme.text_color()
        middle = Qt.AlignmentFlag.AlignVCenter
        for e in self.entries:
            r = e.rect
            if e.kind == "title":
                p.setFont(self._bold())
                p.setPen(text)
                p.drawText(r, middle, e.text)
                p.setFont(self.font())
            elif e.kind == "category" and e.item is not None:
                p.fillRect(QRectF(r.left(), r.top() + (ROW - SWATCH) / 2, SWATCH, SWATCH),
                           theme.overlay_category_color(e.item.category or 0))
                p.setPen(text)
                p.drawText(r.adjusted(SWATCH + 5, 0, 0, 0), middle, e.text)
            elif e.kind == "scale":
                p.setPen(text)
                low_w = QFontMetricsF(self.font()).horizontalAdvance(e.text)
                p.drawText(r, middle | Qt.AlignmentFlag.AlignLeft, e.text)
                p.drawText(r, middle | Qt.AlignmentFlag.AlignRight, e.high)
                bar = QRectF(r.left() + low_w + 6, r.top() + 4, SCALE_W, ROW - 8)
                grad = QLinearGradient(bar.topLeft(), bar.topRight())
                for k in range(5):
                    grad.setColorAt(k / 4, theme.overlay_scale_color(k / 4))
                p.fillRect(bar, grad)
            else:
                p.setPen(theme.graph_color("edge_label"))
                p.drawText(r, WRAP | middle, e.text)
