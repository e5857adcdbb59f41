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

    The scene is rendered into a pixmap once per layout: repainting every item of a 10k-node scene on each pan step of
    the main view would cost more than the main view itself."""

    SIZE = (180, 140)
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
        scene = self.main.scene()
        if scene is None:  # the tab is closing
            return
        self.source = scene.sceneRect()
        if self.source.isEmpty():
            return
        scale = min((self.width() - 4) / self.source.width(), (self.height() - 4) / self.source.height())
        w, h = self.source.width() * scale, self.source.height() * scale
        self.target = QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)
        ratio = self.devicePixelRatioF()
        self.pixmap = QPixmap(max(1, int(w * ratio)), max(1, int(h * ratio)))
        self.pixmap.setDevicePixelRatio(ratio)
        self.pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(self.pixmap)
        scene.render(painter, QRectF(0, 0, w, h), self.source)
        painter.end()
        self.update_visibility()

    def _to_scene(self, pos: QPointF) -> QPointF:
        if self.target.isEmpty():
            return self.source.center()
        fx = (pos.x() - self.target.x()) / self.target.width()
        fy = (pos.y() - self.target.y()) / self.target.height()
        return QPointF(self.source.x() + fx * self.source.width(), self.source.y() + fy * self.source.height())

    def paintEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        p = QPainter(self)
        p.setPen(QPen(theme.graph_color("minimap_frame"), 1))
        p.setBrush(theme.graph_color("minimap_back"))
        p.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        if self.pixmap.isNull() or self.source.isEmpty():
            return
        p.setOpacity(self.OPACITY)
        p.drawPixmap(self.target.topLeft(), self.pixmap)
        p.setOpacity(1.0)
        visible = self.main.mapToScene(self.main.viewport().rect()).boundingRect().intersected(self.source)
        sx, sy = self.target.width() / self.source.width(), self.target.height() / self.source.height()
        box = QRectF(self.target.x() + (visible.x() - self.source.x()) * sx,
                     self.target.y() + (visible.y() - self.source.y()) * sy,
                     visible.width() * sx, visible.height() * sy)
        p.setPen(QPen(theme.HIGHLIGHT, 1))
        p.setBrush(theme.minimap_window_fill())
        p.drawRect(box)

    def mousePressEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        self.main.centerOn(self._to_scene(event.position()))

    def mouseMoveEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        if event.buttons():
            self.main.centerOn(self._to_scene(event.position()))


def bool_setting(key: str, default: bool) -> bool:
    value = QSettings("pt2-viewer", "PT2 Viewer").value(key, default)
    return value if isinstance(value, bool) else str(value).lower() in ("true", "1")
