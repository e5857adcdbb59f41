"""The minimap: the whole graph small, translucent in the view's corner, shown while the graph does not fit."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSettings, Qt, QTimer
from PySide6.QtGui import (
    QPainter,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QWidget

from pt2_viewer.app import theme

if TYPE_CHECKING:
    from pt2_viewer.app.graph.view import GraphView

class MiniMap(QWidget):
    """The whole scene small, with the main view's visible area outlined; click or drag to move there. It sits
    translucent in the view's bottom-right corner (clear of group titles and the program's start), only while the
    graph does not fit in the view, and only if the user wants it (View > Show Minimap, remembered: `set_wanted`).
    Side by side (a comparison) only the first of the graphs shows one: they move together.

    A tall graph is folded into side-by-side columns (top to bottom, then the next column), so the overview stays
    an overview rather than a thin line. The scene is rendered into a pixmap once per layout: repainting every item
    of a 10k-node scene on each pan step of the main view would cost more than the main view itself."""

    SIZE = (180, 140)
    MAX_COLUMNS = 24  # a tall graph is folded into at most this many columns side by side
    GAP = 2.0  # pixels between the columns
    TALL = 3.0  # a scene this many times taller than wide is tall: the minimap grows to TALL_SHARE of the view
    TALL_SHARE = 0.5
    MARGIN = 10
    SETTING = "view/minimap"
    OPACITY = 0.85

    def __init__(self, main: GraphView, parent: QWidget | None = None) -> None:
        super().__init__(parent or main)
        self.main = main
        self.setFixedSize(*self.SIZE)
        self.pixmap = QPixmap()
        self.source = QRectF()  # the scene rect the pixmap shows
        self.target = QRectF()  # where it sits in this widget
        self.columns = 1  # the scene folded into this many columns (a tall graph), each `column_w` x `column_h`
        self.column_w = self.column_h = 0.0
        self.wanted = bool_setting(self.SETTING, True)
        self.beside_another = False  # another graph beside this one shows the minimap
        main.view_changed.connect(self.update_visibility)
        main.viewport().installEventFilter(self)
        # In a later turn of the event loop: the main view's first paint comes first.
        main.scene_shown.connect(lambda: QTimer.singleShot(0, self, self.refit))  # context: not after self is gone
        self.setVisible(False)

    # -- when and where ----------------------------------------------------------------------------------------
    def set_wanted(self, wanted: bool) -> None:
        """The user's choice (View > Show Minimap); the caller remembers it (`remember_wanted`)."""
        self.wanted = wanted
        self.update_visibility()

    @classmethod
    def remember_wanted(cls, wanted: bool) -> None:
        QSettings("pt2-viewer", "PT2 Viewer").setValue(cls.SETTING, wanted)

    def graph_fits(self) -> bool:
        drawing = self.main.scene().itemsBoundingRect()
        if drawing.isEmpty():
            return True
        shown = self.main.mapToScene(self.main.viewport().rect()).boundingRect()
        return shown.adjusted(-1, -1, 1, 1).contains(drawing)

    def should_show(self) -> bool:
        return self.wanted and not self.beside_another and not self.pixmap.isNull() and not self.graph_fits()

    def update_visibility(self) -> None:
        show = self.should_show()
        if show:
            self.place()
        if show != self.isVisible():
            self.setVisible(show)
        if show:
            self.update()

    def place(self) -> None:
        view = self.main.viewport().geometry()
        self.move(view.right() - self.width() - self.MARGIN + 1, view.bottom() - self.height() - self.MARGIN + 1)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.update_visibility()
        return False

    # -- the picture -------------------------------------------------------------------------------------------
    def refit(self) -> None:
        """Render the scene small. A tall graph (a deep network is one long column) is folded: cut into `columns`
        slices from the top down, laid side by side, as many as make the picture biggest, so it is an overview and
        not a thin line."""
        scene = self.main.scene()
        if scene is None:  # the tab is closing
            return
        self.source = scene.sceneRect()
        if self.source.isEmpty():
            return
        sw, sh = self.source.width(), self.source.height()
        height = self.SIZE[1]
        if sh > self.TALL * sw:  # a tall graph: a taller overview strip, folded below
            height = max(height, int(self.main.viewport().height() * self.TALL_SHARE))
        self.setFixedSize(self.SIZE[0], height)
        room_w, room_h = self.width() - 4, self.height() - 4
        self.columns, scale = max(((k, min((room_w - (k - 1) * self.GAP) / (k * sw), room_h * k / sh))
                                   for k in range(1, self.MAX_COLUMNS + 1)), key=lambda t: (t[1], -t[0]))
        self.column_w, self.column_h = sw * scale, sh / self.columns * scale
        w = self.columns * self.column_w + (self.columns - 1) * self.GAP
        self.target = QRectF((self.width() - w) / 2, (self.height() - self.column_h) / 2, w, self.column_h)
        ratio = self.devicePixelRatioF()
        self.pixmap = QPixmap(max(1, int(w * ratio)), max(1, int(self.column_h * ratio)))
        self.pixmap.setDevicePixelRatio(ratio)
        self.pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(self.pixmap)
        for i in range(self.columns):
            scene.render(painter, QRectF(i * (self.column_w + self.GAP), 0, self.column_w, self.column_h),
                         self._slice(i))
        painter.end()
        self.update_visibility()

    def _slice(self, i: int) -> QRectF:
        """The part of the scene column `i` shows: the i-th of `columns` bands from the top."""
        band = self.source.height() / self.columns
        return QRectF(self.source.x(), self.source.y() + i * band, self.source.width(), band)

    def _to_scene(self, pos: QPointF) -> QPointF:
        if self.target.isEmpty():
            return self.source.center()
        step = self.column_w + self.GAP
        i = min(max(int((pos.x() - self.target.x()) // step), 0), self.columns - 1)
        fx = min(max((pos.x() - self.target.x() - i * step) / self.column_w, 0.0), 1.0)
        fy = min(max((pos.y() - self.target.y()) / self.column_h, 0.0), 1.0)
        band = self._slice(i)
        return QPointF(band.x() + fx * band.width(), band.y() + fy * band.height())

    def view_boxes(self) -> list[QRectF]:
        """Where the main view's visible area is in this widget: one box per column it reaches."""
        visible = self.main.mapToScene(self.main.viewport().rect()).boundingRect().intersected(self.source)
        boxes = []
        s = self.column_w / self.source.width() if self.source.width() else 0.0
        for i in range(self.columns):
            band = self._slice(i)
            part = visible.intersected(band)
            if part.isEmpty():
                continue
            x0 = self.target.x() + i * (self.column_w + self.GAP)
            boxes.append(QRectF(x0 + (part.x() - band.x()) * s, self.target.y() + (part.y() - band.y()) * s,
                                part.width() * s, part.height() * s))
        return boxes

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setPen(QPen(theme.graph_color("minimap_frame"), 1))
        p.setBrush(theme.graph_color("minimap_back"))
        p.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        if self.pixmap.isNull() or self.source.isEmpty():
            return
        p.setOpacity(self.OPACITY)
        p.drawPixmap(self.target.topLeft(), self.pixmap)
        p.setOpacity(1.0)
        if self.columns > 1:  # the folds: a faint line between the columns
            p.setPen(QPen(theme.graph_color("minimap_frame"), 1, Qt.PenStyle.DotLine))
            for i in range(1, self.columns):
                x = self.target.x() + i * (self.column_w + self.GAP) - self.GAP / 2
                p.drawLine(QPointF(x, self.target.top()), QPointF(x, self.target.bottom()))
        p.setPen(QPen(theme.HIGHLIGHT, 1))
        p.setBrush(theme.minimap_window_fill())
        for box in self.view_boxes():
            p.drawRect(box)

    def mousePressEvent(self, event) -> None:
        self.main.centerOn(self._to_scene(event.position()))

    def mouseMoveEvent(self, event) -> None:
        if event.buttons():
            self.main.centerOn(self._to_scene(event.position()))


def bool_setting(key: str, default: bool) -> bool:
    value = QSettings("pt2-viewer", "PT2 Viewer").value(key, default)
    return value if isinstance(value, bool) else str(value).lower() in ("true", "1")
