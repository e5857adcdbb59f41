"""The graph: a QGraphicsScene of light items drawn from a composed `SceneLayout` (core/graph/scene.py).

Following Qt's 40,000-chip example: one light item per node with detail by zoom level (a plain box when zoomed
out, text when close), all edges batched into one path item, no per-item caches. The view holds no logic: it draws
what core computed and reports clicks as signals.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView, QStyleOptionGraphicsItem, QWidget

from pt2_viewer.app import theme
from pt2_viewer.core.graph.document import Look
from pt2_viewer.core.graph.highlight_state import HighlightState
from pt2_viewer.core.graph.ids import group_item, group_of
from pt2_viewer.core.graph.scene import EdgeLine, GroupBox, NodeBox, SceneLayout

DETAIL_LOD = 0.45  # below this zoom, nodes are plain boxes
LABEL_LOD = 0.9  # above this zoom, edges show the tensor they carry
READABLE_SCALE = 0.7  # the first view of a big graph: node text readable
START_MARGIN = 24  # pixels between the first view's region and the viewport's edge
HEAT = QColor("#d7301f")  # the hottest node's tint in the per-node time overlay


_TITLE_FONT = QFont()
_TITLE_FONT.setPointSizeF(9)
_TITLE_FONT.setBold(True)
_SUB_FONT = QFont()
_SUB_FONT.setPointSizeF(7.5)


class NodeItem(QGraphicsItem):
    """One node: colours and elided text are computed once here, so paint() only draws."""

    def __init__(self, box: NodeBox, look: Look) -> None:
        super().__init__()
        self.name = box.node
        self.look = look
        self.rect = QRectF(0, 0, box.w, box.h)
        self.state = HighlightState.NONE
        self.fill = theme.kind_color(look.kind)
        self.pen = QPen(self.fill.darker(150), 1)
        self.text_color = theme.text_color()
        self.top = QRectF(6, 2, box.w - 12, box.h / 2)
        self.bottom = QRectF(4, box.h / 2 - 1, box.w - 8, box.h / 2)
        self.subtitle = QFontMetricsF(_SUB_FONT).elidedText(look.subtitle, Qt.TextElideMode.ElideRight,
                                                            self.bottom.width())
        self.setPos(box.x, box.y)
        self.setZValue(2)
        self.setToolTip(f"{box.node}\n{look.subtitle}")
        self.heat: float | None = None  # 0..1: share of the slowest node's time, from a run
        self.heat_fill: QColor | None = None

    def set_heat(self, heat: float | None) -> None:
        """Tint the node from its kind colour towards HEAT by `heat` (0..1); None removes the tint."""
        if heat == self.heat:
            return
        self.heat = heat
        if heat is None:
            self.heat_fill = None
        else:
            t = 0.15 + 0.85 * max(0.0, min(1.0, heat))
            f, h = self.fill, HEAT
            self.heat_fill = QColor(round(f.red() + (h.red() - f.red()) * t),
                                    round(f.green() + (h.green() - f.green()) * t),
                                    round(f.blue() + (h.blue() - f.blue()) * t))
        self.update()

    def boundingRect(self) -> QRectF:
        return self.rect.adjusted(-2, -2, 2, 2)

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())  # type: ignore[attr-defined]
        border = _STATE_PENS.get(self.state)
        fill = self.heat_fill or self.fill
        if lod < DETAIL_LOD:
            p.fillRect(self.rect, border.color() if border else fill)
            return
        p.setPen(border or self.pen)
        p.setBrush(fill)
        p.drawRoundedRect(self.rect, 5, 5)
        p.setPen(self.text_color)
        p.setFont(_TITLE_FONT)
        p.drawText(self.top, Qt.AlignmentFlag.AlignCenter, self.look.title)
        p.setFont(_SUB_FONT)
        p.drawText(self.bottom, Qt.AlignmentFlag.AlignCenter, self.subtitle)


_STATE_PENS = {HighlightState.NEIGHBOUR: QPen(theme.NEIGHBOUR, 3), HighlightState.SELECTED: QPen(theme.HIGHLIGHT, 3),
               HighlightState.MATCH: QPen(theme.MATCH, 3)}


class GroupItem(QGraphicsItem):
    def __init__(self, box: GroupBox) -> None:
        super().__init__()
        self.path = box.path
        self.box = box
        self.rect = QRectF(0, 0, box.w, box.h)
        self.state = HighlightState.NONE
        self.setPos(box.x, box.y)
        self.setZValue(1 if box.expanded else 2)
        self.setToolTip(f"{box.path or '(model)'}  ({box.count} nodes)\nDouble-click to "
                        f"{'collapse' if box.expanded else 'expand'}")

    def boundingRect(self) -> QRectF:
        return self.rect.adjusted(-2, -2, 2, 2)

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())  # type: ignore[attr-defined]
        dark = theme.is_dark()
        base = QColor("#8a94a6")
        if self.box.expanded:
            tint = QColor(base)
            tint.setAlpha(18 + 10 * (self.box.depth % 3))
            p.setBrush(tint)
            pen = QPen(theme.HIGHLIGHT if self.state else base, 2 if self.state else 1, Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.drawRoundedRect(self.rect, 8, 8)
            if lod >= DETAIL_LOD * 0.6:
                p.setPen(theme.text_color(dark))
                f = p.font()
                f.setPointSizeF(8.5)
                f.setBold(True)
                p.setFont(f)
                p.drawText(QRectF(10, 4, self.rect.width() - 20, 20), Qt.AlignmentFlag.AlignLeft,
                           f"▾ {self.box.title}")
            return
        fill = QColor("#c7d3e6") if not dark else QColor("#3a4658")
        if lod < DETAIL_LOD:
            p.fillRect(self.rect, theme.HIGHLIGHT if self.state else fill)
            return
        p.setPen(QPen(theme.HIGHLIGHT, 3) if self.state else QPen(fill.darker(150), 1.2))
        p.setBrush(fill)
        p.drawRoundedRect(self.rect, 6, 6)
        # A second offset border: a stack of nodes hides inside.
        p.setPen(QPen(fill.darker(170), 1))
        p.drawLine(QPointF(6, self.rect.height() + 2), QPointF(self.rect.width() - 2, self.rect.height() + 2))
        p.setPen(theme.text_color(dark))
        f = p.font()
        f.setPointSizeF(9)
        f.setBold(True)
        p.setFont(f)
        p.drawText(QRectF(6, 3, self.rect.width() - 12, 20), Qt.AlignmentFlag.AlignCenter, f"▸ {self.box.title}")
        f.setBold(False)
        f.setPointSizeF(7.5)
        p.setFont(f)
        p.drawText(QRectF(6, 22, self.rect.width() - 12, 18), Qt.AlignmentFlag.AlignCenter,
                   f"{self.box.count} nodes")


class ProxyItem(QGraphicsItem):
    """A small reference to a hub node, drawn beside a consumer instead of a long edge."""

    def __init__(self, hub: str, x: float, y: float) -> None:
        super().__init__()
        self.hub = hub
        self.state = HighlightState.NONE
        f = QFont()
        f.setPointSizeF(7)
        self.text = f"↳ {hub}"
        self.rect = QRectF(0, 0, QFontMetricsF(f).horizontalAdvance(self.text) + 8, 15)
        self.setPos(x, y)
        self.setZValue(3)
        self.setToolTip(f"Uses hub '{hub}' (many consumers: drawn as a reference). Click to select it.")

    def boundingRect(self) -> QRectF:
        return self.rect

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())  # type: ignore[attr-defined]
        color = theme.HIGHLIGHT if self.state else QColor("#7a869a")
        if lod < DETAIL_LOD:
            p.fillRect(self.rect, color)
            return
        p.setPen(QPen(color, 1))
        p.setBrush(QColor(255, 255, 255, 200) if not theme.is_dark() else QColor(40, 40, 40, 200))
        p.drawRoundedRect(self.rect, 3, 3)
        f = p.font()
        f.setPointSizeF(7)
        p.setFont(f)
        p.drawText(self.rect, Qt.AlignmentFlag.AlignCenter, self.text)


def _edge_path(e: EdgeLine) -> QPainterPath:
    """Graphviz's own spline when the edge was laid out with both ends, else a vertical S-curve."""
    pts = e.route
    if len(pts) >= 4 and (len(pts) - 1) % 3 == 0:
        path = QPainterPath(QPointF(*pts[0]))
        for i in range(1, len(pts) - 1, 3):
            path.cubicTo(QPointF(*pts[i]), QPointF(*pts[i + 1]), QPointF(*pts[i + 2]))
        return path
    return _curve(e.p0, e.p1)


def _curve(p0: tuple[float, float], p1: tuple[float, float]) -> QPainterPath:
    path = QPainterPath(QPointF(*p0))
    dy = max(20.0, abs(p1[1] - p0[1]) * 0.5)
    path.cubicTo(QPointF(p0[0], p0[1] + dy), QPointF(p1[0], p1[1] - dy), QPointF(*p1))
    return path


TILE = 800.0  # edges are batched into one path per tile of the scene; paint() draws only exposed tiles


class EdgeLayer(QGraphicsItem):
    """Every edge, batched: one path (and one arrowhead path) per scene tile, so painting costs the same whether the
    view shows ten edges or ten thousand; highlighted edges in a separate path on top."""

    def __init__(self, layout: SceneLayout, label_of: Callable[[EdgeLine], str]) -> None:
        super().__init__()
        self.layout = layout
        self.label_of = label_of
        self.labels: dict[int, str] = {}  # edge index -> label, computed the first time it is drawn
        tiles: dict[tuple[int, int], tuple[QPainterPath, QPainterPath]] = {}
        for e in layout.edges:
            key = (int(min(e.p0[0], e.p1[0]) // TILE), int(min(e.p0[1], e.p1[1]) // TILE))
            path, arrows = tiles.setdefault(key, (QPainterPath(), QPainterPath()))
            path.addPath(_edge_path(e))
            x, y = e.p1
            arrows.moveTo(x - 4, y - 7)
            arrows.lineTo(x, y)
            arrows.lineTo(x + 4, y - 7)
        self.tiles = [(path.boundingRect().adjusted(-2, -2, 2, 2), path, arrows) for path, arrows in tiles.values()]
        self.hot = QPainterPath()
        bounds = QRectF()
        for rect, _, _ in self.tiles:
            bounds = bounds.united(rect)
        self.bounds = bounds.adjusted(-60, -20, 60, 20)
        self.color = QColor("#9aa3b2") if not theme.is_dark() else QColor("#6b7382")
        self.setZValue(0)
        # Without this flag Qt reports the whole bounding rect as exposed, and every tile and label would be drawn.
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)

    def set_hot(self, pairs: set[tuple[str, str]]) -> None:
        self.hot = QPainterPath()
        for e in self.layout.edges:
            if (e.src, e.dst) in pairs:
                self.hot.addPath(_edge_path(e))
        self.update()

    def boundingRect(self) -> QRectF:
        return self.bounds

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())  # type: ignore[attr-defined]
        exposed = option.exposedRect  # type: ignore[attr-defined]
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(self.color, 1.2 if lod >= DETAIL_LOD else 0))
        for rect, path, arrows in self.tiles:
            if rect.intersects(exposed):
                p.drawPath(path)
                if lod >= DETAIL_LOD:
                    p.drawPath(arrows)
        if not self.hot.isEmpty():
            p.setPen(QPen(theme.HIGHLIGHT, 2.5))
            p.drawPath(self.hot)
        if lod >= LABEL_LOD:
            p.setFont(_SUB_FONT)
            p.setPen(theme.text_color())
            for i, e in enumerate(self.layout.edges):
                mid = QPointF((e.p0[0] + e.p1[0]) / 2 + 4, (e.p0[1] + e.p1[1]) / 2)
                if exposed.contains(mid):
                    label = self.labels.get(i)
                    if label is None:
                        label = self.labels[i] = self.label_of(e)
                    if label:
                        p.drawText(mid, label)


class GraphView(QGraphicsView):
    """Pan with the mouse, zoom with the wheel or Ctrl+=/-/0, click to select, double-click a group to toggle it."""

    node_clicked = Signal(str)
    group_toggled = Signal(str)
    hub_clicked = Signal(str)
    background_clicked = Signal()
    view_changed = Signal()
    scene_shown = Signal()  # a new layout is in the scene
    node_double_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setBackgroundBrush(QBrush(self.palette().base()))
        self.nodes: dict[str, NodeItem] = {}
        self.groups: dict[str, GroupItem] = {}
        self.proxies: list[ProxyItem] = []
        self.edges: EdgeLayer | None = None
        self.layout: SceneLayout | None = None
        self.heat: dict[str, float] = {}  # per-node time overlay, kept across re-layouts
        self.painted = 0  # frames painted since the last scene; tests and --screenshot wait on it
        self.start_inset = 0  # pixels at the viewport's left that an overlay covers (the minimap): show_start avoids
        # Ctrl+=/-/0 belong to the main window's View menu (one owner per shortcut, or Qt calls them ambiguous)
        self.horizontalScrollBar().valueChanged.connect(self.view_changed)
        self.verticalScrollBar().valueChanged.connect(self.view_changed)

    # -- content -----------------------------------------------------------------------------------------------
    def show_layout(self, layout: SceneLayout, looks: dict[str, Look],
                    edge_label: Callable[[EdgeLine], str], keep_view: bool = False) -> None:
        scene = self.scene()
        center = self.mapToScene(self.viewport().rect().center())
        scene.clear()
        self.nodes.clear()
        self.groups.clear()
        self.proxies.clear()
        self.layout = layout
        for g in layout.groups:
            item = GroupItem(g)
            scene.addItem(item)
            self.groups[g.path] = item
        self.edges = EdgeLayer(layout, edge_label)
        scene.addItem(self.edges)
        for n in layout.nodes:
            item = NodeItem(n, looks[n.node])
            item.set_heat(self.heat.get(n.node))
            scene.addItem(item)
            self.nodes[n.node] = item
        for px in layout.proxies:
            item = ProxyItem(px.hub, px.x, px.y)
            scene.addItem(item)
            self.proxies.append(item)
        rect = scene.itemsBoundingRect().adjusted(-40, -40, 40, 40)
        scene.setSceneRect(rect)
        self.setSceneRect(QRectF())  # this view scrolls over the scene's rect again (show_start may widen it)
        self.painted = 0
        if keep_view:
            self.centerOn(center)
        else:
            self.show_start()
        self.scene_shown.emit()

    def set_states(self, nodes: dict[str, HighlightState], groups: dict[str, HighlightState],
                   hot_edges: set[tuple[str, str]],
                   hub: str | None = None) -> None:
        for name, item in self.nodes.items():
            s = nodes.get(name, HighlightState.NONE)
            if item.state != s:
                item.state = s
                item.update()
        for path, item in self.groups.items():
            s = groups.get(path, HighlightState.NONE)
            if item.state != s:
                item.state = s
                item.update()
        for px in self.proxies:
            s = HighlightState.SELECTED if px.hub == hub else HighlightState.NONE
            if px.state != s:
                px.state = s
                px.update()
        if self.edges is not None:
            self.edges.set_hot(hot_edges)

    def set_heat(self, heat: dict[str, float]) -> None:
        """Per-node heat (0..1, e.g. time relative to the slowest node) as a fill tint; {} removes the overlay."""
        self.heat = dict(heat)
        for name, item in self.nodes.items():
            item.set_heat(self.heat.get(name))

    def center_on_item(self, item_id: str) -> None:
        path = group_of(item_id)
        if path is not None:
            item = self.groups.get(path)
        else:
            item = self.nodes.get(item_id)
        if item is None:
            return
        if self.transform().m11() < 0.8:
            self.resetTransform()
        self.centerOn(item)

    # -- zoom and pan ------------------------------------------------------------------------------------------
    def zoom(self, factor: float) -> None:
        scale = self.transform().m11() * factor
        if 0.01 <= scale <= 8:
            self.scale(factor, factor)
            self.view_changed.emit()

    def fit(self) -> None:
        rect = self.scene().sceneRect()
        if rect.isEmpty():
            return
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.0:
            self.resetTransform()
            self.centerOn(rect.center())
        self.view_changed.emit()

    def show_start(self) -> None:
        """Fit a graph that stays readable whole; otherwise show where the program starts (its inputs and the
        items they feed, as many as fit: `SceneLayout.start`) at a readable zoom, that region at the top."""
        self.fit()
        if self.transform().m11() >= READABLE_SCALE or self.layout is None:
            return
        view = self.viewport().rect()
        inset = self.start_inset if view.width() - self.start_inset >= 2 * self.start_inset else 0
        room_w = max(1.0, view.width() - inset - 2 * START_MARGIN)
        room_h = max(1.0, view.height() - 2 * START_MARGIN)
        rects = [QRectF(*r) for r in self.layout.start]
        if not rects:  # nothing to anchor on: the top of the drawing
            top = self.scene().sceneRect()
            rects = [QRectF(top.left(), top.top(), top.width(), 1.0)]
        region = rects[0]
        for r in rects[1:]:
            wider = region.united(r)
            if wider.width() * READABLE_SCALE <= room_w and wider.height() * READABLE_SCALE <= room_h:
                region = wider
        scale = max(READABLE_SCALE, min(1.0, room_w / max(region.width(), 1.0), room_h / max(region.height(), 1.0)))
        self.resetTransform()
        self.scale(scale, scale)
        # the region's top just under the top edge, centred across what the overlay leaves free (the flow runs down
        # from there); this view may scroll past the drawing's edge for that, so a narrow start at the drawing's side
        # is not pushed aside
        w, h = view.width() / scale, view.height() / scale
        left = region.center().x() - (inset + (view.width() - inset) / 2) / scale
        shown = QRectF(left, region.top() - START_MARGIN / scale, w, h)
        self.setSceneRect(self.scene().sceneRect().united(shown))
        self.centerOn(shown.center())
        self.view_changed.emit()

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta().y()
        if delta:
            self.zoom(1.0015 ** delta)
        event.accept()

    # -- clicks ------------------------------------------------------------------------------------------------
    def _item_at(self, pos) -> QGraphicsItem | None:  # type: ignore[no-untyped-def]
        for item in self.items(pos):
            if isinstance(item, (NodeItem, ProxyItem)):
                return item
            if isinstance(item, GroupItem):
                return item
        return None

    def mousePressEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        if event.button() == Qt.MouseButton.LeftButton:
            item = self._item_at(event.position().toPoint())
            if isinstance(item, NodeItem):
                self.node_clicked.emit(item.name)
            elif isinstance(item, ProxyItem):
                self.hub_clicked.emit(item.hub)
            elif isinstance(item, GroupItem) and not item.box.expanded:
                self.node_clicked.emit(group_item(item.path))
            elif item is None:
                self.background_clicked.emit()
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        item = self._item_at(event.position().toPoint())
        if isinstance(item, GroupItem):
            self.group_toggled.emit(item.path)
            return
        if isinstance(item, NodeItem):
            self.node_double_clicked.emit(item.name)
            return
        super().mouseDoubleClickEvent(event)

    def paintEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        super().paintEvent(event)
        self.painted += 1


class MiniMap(QWidget):
    """The whole scene small, with the main view's visible area outlined; click or drag to move there.

    The scene is rendered into a pixmap once per layout: repainting every item of a 10k-node scene on each pan step of
    the main view would cost more than the main view itself."""

    SIZE = (180, 140)

    def __init__(self, main: GraphView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.main = main
        self.setFixedSize(*self.SIZE)
        main.start_inset = self.SIZE[0] + 16  # it sits at (8, 8): the first view keeps the program's start clear of it
        self.pixmap = QPixmap()
        self.source = QRectF()  # the scene rect the pixmap shows
        self.target = QRectF()  # where it sits in this widget
        main.view_changed.connect(self.update)
        # In a later turn of the event loop: the main view's first paint comes first.
        main.scene_shown.connect(lambda: QTimer.singleShot(0, self.refit))

    def refit(self) -> None:
        scene = self.main.scene()
        self.source = scene.sceneRect()
        if self.source.isEmpty():
            return
        scale = min((self.width() - 4) / self.source.width(), (self.height() - 4) / self.source.height())
        w, h = self.source.width() * scale, self.source.height() * scale
        self.target = QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)
        ratio = self.devicePixelRatioF()
        self.pixmap = QPixmap(max(1, int(w * ratio)), max(1, int(h * ratio)))
        self.pixmap.setDevicePixelRatio(ratio)
        self.pixmap.fill(self.palette().base().color())
        painter = QPainter(self.pixmap)
        scene.render(painter, QRectF(0, 0, w, h), self.source)
        painter.end()
        self.update()

    def _to_scene(self, pos: QPointF) -> QPointF:
        if self.target.isEmpty():
            return self.source.center()
        fx = (pos.x() - self.target.x()) / self.target.width()
        fy = (pos.y() - self.target.y()) / self.target.height()
        return QPointF(self.source.x() + fx * self.source.width(), self.source.y() + fy * self.source.height())

    def paintEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        p.setPen(QPen(self.palette().mid().color(), 1))
        p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        if self.pixmap.isNull() or self.source.isEmpty():
            return
        p.drawPixmap(self.target.topLeft(), self.pixmap)
        visible = self.main.mapToScene(self.main.viewport().rect()).boundingRect().intersected(self.source)
        sx, sy = self.target.width() / self.source.width(), self.target.height() / self.source.height()
        box = QRectF(self.target.x() + (visible.x() - self.source.x()) * sx,
                     self.target.y() + (visible.y() - self.source.y()) * sy, visible.width() * sx, visible.height() * sy)
        p.setPen(QPen(theme.HIGHLIGHT, 1))
        p.setBrush(QColor(232, 113, 10, 40))
        p.drawRect(box)

    def mousePressEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        self.main.centerOn(self._to_scene(event.position()))

    def mouseMoveEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        if event.buttons():
            self.main.centerOn(self._to_scene(event.position()))
