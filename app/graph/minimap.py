"""The minimap: the whole graph small, in a column of its own beside the graph, shown while the graph does not fit.

It keeps out of the way: sized to the view (a sixth of its width at most, never the 175 x 380 px block it was), beside
the graph rather than over it (the view gives up its width while it shows, `GraphView.reserve_right`: a corner of the
graph still covered nodes, issue 43 §4), and in a comparison's panes only when asked (the comparison's own checkbox:
the panes are narrow and move together). Its picture is the plain graph; the marks, the
matches and the selection are painted over it from the view's current states, so they leave it when they leave the
graph."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QPainter,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.graph.view_settings import bool_setting
from pt2_viewer.app.qt import later
from pt2_viewer.app.settings import app_settings
from pt2_viewer.core.graph.highlight_state import HighlightState

if TYPE_CHECKING:
    from pt2_viewer.app.graph.view import GraphView

class MiniMap(QWidget):
    """The whole scene small, with the main view's visible area outlined; click or drag to move there. It sits at
    the foot of a column of its own right of the graph (the view narrower by that much), only while the graph does
    not fit in the view, and only if the user wants it (View > Show Minimap, remembered: `set_wanted`).
    Side by side (a comparison) only the first of the graphs shows one: they move together.

    A tall graph is folded into side-by-side columns (top to bottom, then the next column), so the overview stays
    an overview rather than a thin line. The scene is rendered into a pixmap once per layout: repainting every item
    of a 10k-node scene on each pan step of the main view would cost more than the main view itself."""

    BOXES_ABOVE = 2000  # node items: above, the picture is painted from the items' boxes (_paint_boxes)
    SIZE = (160, 120)  # the largest it gets (a wide view); a narrower view gets a smaller one, SHARE of its width
    SHARE = 0.16
    MIN_W = 80
    MAX_COLUMNS = 24  # a tall graph is folded into at most this many columns side by side
    GAP = 2.0  # pixels between the columns
    TALL = 3.0  # a scene this many times taller than wide is tall: the minimap grows to TALL_SHARE of the view
    TALL_SHARE = 0.3
    TALL_MAX = 240
    MARK = 3.0  # the least size of a mark's dot, pixels
    MARGIN = 10
    SIDE_GAP = 3  # between the graph and the minimap's column, and the column and the scroll bar
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
        self.in_comparison = False  # a pane of a comparison: shown only when `asked`
        self.asked = False
        self.marks: list[tuple[QRectF, bool]] = []  # scene rects of the marked items, and whether each is selected
        main.view_changed.connect(self.update_visibility)
        main.states_changed.connect(self._states_changed)
        main.viewport().installEventFilter(self)
        # In a later turn of the event loop: the main view's first paint comes first.
        main.scene_shown.connect(lambda: later(self, self.refit))  # not after self is gone
        self._resized = QTimer(self, singleShot=True, interval=150)  # a view resized: the picture sized again
        self._resized.timeout.connect(self.refit)
        self.setVisible(False)

    # -- when and where ----------------------------------------------------------------------------------------
    def set_wanted(self, wanted: bool) -> None:
        """The user's choice (View > Show Minimap); the caller remembers it (`remember_wanted`)."""
        self.wanted = wanted
        self.update_visibility()

    @classmethod
    def remember_wanted(cls, wanted: bool) -> None:
        app_settings().setValue(cls.SETTING, wanted)

    def graph_fits(self) -> bool:
        drawing = self.main.drawing
        if drawing.isEmpty():
            return True
        shown = self.main.mapToScene(self.main.viewport().rect()).boundingRect()
        return shown.adjusted(-1, -1, 1, 1).contains(drawing)

    def should_show(self) -> bool:
        return (self.wanted and not self.beside_another and (self.asked or not self.in_comparison)
                and not self.pixmap.isNull() and not self.graph_fits())

    def set_asked(self, asked: bool) -> None:
        """A comparison's checkbox: show the minimap in its pane after all (or not)."""
        self.asked = asked
        self.update_visibility()

    def update_visibility(self) -> None:
        show = self.should_show()
        self.main.reserve_right(self.width() + 2 * self.SIDE_GAP if show else 0)  # its column beside the graph
        if show:
            self.place()
        if show != self.isVisible():
            self.setVisible(show)
        if show:
            self.update()

    def place(self) -> bool:
        """Move to the foot of its column, right of the graph (never over it)."""
        view = self.main.viewport().geometry()
        self.move(view.right() + 1 + self.SIDE_GAP, max(view.top(), view.bottom() - self.height() + 1))
        return True

    def base_size(self) -> tuple[int, int]:
        """The minimap's size for a wide scene: SHARE of the view's width, between MIN_W and SIZE."""
        room = self.main.viewport().width() + self.main.viewportMargins().right()  # its own column counted in
        w = int(min(self.SIZE[0], max(self.MIN_W, room * self.SHARE)))
        return w, int(w * self.SIZE[1] / self.SIZE[0])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.update_visibility()
            if not self.pixmap.isNull() and self.base_size()[0] != self.width():
                self._resized.start()
        return False

    def _states_changed(self) -> None:
        """The view's highlight states changed: the marks painted over the picture follow, and the corner may."""
        shown = (HighlightState.SELECTED, HighlightState.MATCH)
        self.marks = [(item.sceneBoundingRect(), item.state == HighlightState.SELECTED)
                      for items in (self.main.nodes.values(), self.main.groups.values())
                      for item in items if item.state in shown]
        self.update_visibility()

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
        width, height = self.base_size()
        if sh > self.TALL * sw:  # a tall graph: a taller overview strip, folded below
            height = max(height, min(self.TALL_MAX, int(self.main.viewport().height() * self.TALL_SHARE)))
        self.setFixedSize(width, height)
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
        if len(self.main.nodes) > self.BOXES_ABOVE:
            self._paint_boxes(painter, scale)
        else:
            with self.main.plain():  # the graph itself: marks and the selection are painted over it (paintEvent)
                for i in range(self.columns):
                    scene.render(painter, QRectF(i * (self.column_w + self.GAP), 0, self.column_w, self.column_h),
                                 self._slice(i))
        painter.end()
        self.update_visibility()

    def _paint_boxes(self, painter: QPainter, scale: float) -> None:
        """The graph as its boxes in their overview colours (frames, collapsed groups, nodes; no edges), each drawn
        in the columns its band falls in: what rendering the scene at this scale shows, without a Python paint()
        call per item (a 10k-node graph: 0.05 s instead of 0.4 s)."""
        band = self.source.height() / self.columns
        top = self.source.y()
        columns: list[list[tuple[QRectF, QColor]]] = [[] for _ in range(self.columns)]
        groups = sorted(self.main.groups.values(), key=lambda g: g.zValue())  # frames under the boxes in them
        boxes: list[tuple[QRectF, QColor]] = [
            (g.sceneBoundingRect(), g.tint if g.box.expanded else g.overview_fill) for g in groups]
        boxes += [(n.sceneBoundingRect(), n.overlay_fill or n.kind_overview) for n in self.main.nodes.values()]
        for rect, color in boxes:
            first = int((rect.top() - top) // band)
            last = int((rect.bottom() - top) // band)
            for i in range(max(first, 0), min(last, self.columns - 1) + 1):
                columns[i].append((rect, color))
        for i, column in enumerate(columns):
            painter.save()
            x = i * (self.column_w + self.GAP)
            painter.setClipRect(QRectF(x, 0, self.column_w, self.column_h))
            painter.translate(x, 0)
            painter.scale(scale, scale)
            painter.translate(-self.source.x(), -(top + i * band))
            for rect, color in column:
                painter.fillRect(rect, color)
            painter.restore()

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

    def _to_map(self, rect: QRectF) -> QRectF | None:
        """Where a scene rect's centre is in this widget, as a dot at least MARK pixels wide."""
        if self.source.isEmpty() or not self.source.contains(rect.center()):
            return None
        s = self.column_w / self.source.width()
        band = self.source.height() / self.columns
        c = rect.center()
        i = min(int((c.y() - self.source.y()) // band), self.columns - 1)
        x = self.target.x() + i * (self.column_w + self.GAP) + (c.x() - self.source.x()) * s
        y = self.target.y() + (c.y() - self.source.y() - i * band) * s
        w, h = max(self.MARK, rect.width() * s), max(self.MARK, rect.height() * s)
        return QRectF(x - w / 2, y - h / 2, w, h)

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
        for rect, selected in self.marks:
            at = self._to_map(rect)
            if at is not None:
                p.fillRect(at, theme.HIGHLIGHT if selected else theme.MATCH)
        p.setPen(QPen(theme.HIGHLIGHT, 1))
        p.setBrush(theme.minimap_window_fill())
        for box in self.view_boxes():
            p.drawRect(box)

    def mousePressEvent(self, event) -> None:
        self.main.centerOn(self._to_scene(event.position()))

    def mouseMoveEvent(self, event) -> None:
        if event.buttons():
            self.main.centerOn(self._to_scene(event.position()))
