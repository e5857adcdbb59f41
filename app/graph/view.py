"""The graph: a QGraphicsScene of light items drawn from a composed `SceneLayout` (core/graph/scene.py).

Following Qt's 40,000-chip example: one light item per node with detail by zoom level (a plain box when zoomed
out, text when close), all edges batched into one path item, no per-item caches. The view holds no logic: it draws
what core computed and reports clicks as signals.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QEvent, QPoint, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QPainter,
    QPainterPath,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView, QToolTip, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.graph.edge_layer import EdgeLayer
from pt2_viewer.app.graph.group_titles import GroupTitles
from pt2_viewer.app.graph.items import GroupItem, NodeItem, ProxyItem, node_item, readable_scale, set_gaps
from pt2_viewer.core.graph import framing
from pt2_viewer.core.graph.document import Look
from pt2_viewer.core.graph.drawing import EdgeLine, SceneLayout
from pt2_viewer.core.graph.highlight_state import HighlightState
from pt2_viewer.core.graph.ids import group_item, group_of
from pt2_viewer.core.graph.overlays import GroupValue, Overlay

READABLE_SCALE = readable_scale()  # the first view of a big graph: every label at least 9 px high (items.py)


class GraphView(QGraphicsView):
    """Pan with the mouse, zoom with the wheel or Ctrl+=/-/0, click to select, double-click a group to toggle it."""

    # The scene's layout shown. The name is QWidget.layout()'s (the widget's own QLayout: a QGraphicsView has none
    # that this code asks for); renaming it would change every caller.
    layout: SceneLayout | None  # type: ignore[assignment]

    node_clicked = Signal(str)
    group_toggled = Signal(str)
    hub_clicked = Signal(str)
    background_clicked = Signal()
    view_changed = Signal()
    scene_shown = Signal()  # a new layout is in the scene
    node_double_clicked = Signal(str)
    step_requested = Signal(str)  # an arrow key with a selection: "up" (a producer), "down" (a user), "left", "right"
    context_requested = Signal(str, QPoint)  # right-click: the item's id ("" for the background), global position
    palette_changed = Signal()  # the system's light/dark palette changed: the document redraws
    states_changed = Signal()  # the selection, neighbours, matches or marks were painted anew (set_states)

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
        self.drawing = QRectF()  # the scene's items' bounding rect, as of the last show_layout
        self.selected: NodeItem | GroupItem | None = None  # the item set_states last made SELECTED
        self.overlay: Overlay | None = None  # painted over node colours, kept across re-layouts (set_overlay)
        self.painted = 0  # frames painted since the last scene; tests and --screenshot wait on it
        self.start_inset = 0  # pixels at the viewport's left that an overlay covers (the minimap): show_start avoids
        # Ctrl+=/-/0 belong to the main window's View menu (one owner per shortcut, or Qt calls them ambiguous)
        self.horizontalScrollBar().valueChanged.connect(self.view_changed)
        self.verticalScrollBar().valueChanged.connect(self.view_changed)
        self.describe: Callable[[str], str] | None = None  # a node's tooltip text, from the document (tools.py)
        # sticky group titles and the breadcrumb, drawn in the foreground
        self.titles = GroupTitles(self, self.groups, lambda: self.layout)
        self.view_changed.connect(self.viewport().update)  # they move with the view: a scroll repaints them all

    # -- content -----------------------------------------------------------------------------------------------
    def show_layout(self, layout: SceneLayout, looks: dict[str, Look],
                    edge_label: Callable[[EdgeLine], str], keep_view: bool = False) -> None:
        scene = self.scene()
        center = self.mapToScene(self.viewport().rect().center())
        self.selected = None
        scene.clear()
        self.nodes.clear()
        self.groups.clear()
        self.proxies.clear()
        self.layout = layout
        for g in layout.groups:
            group = GroupItem(g)
            group.titled_by_view = g.expanded
            scene.addItem(group)
            self.groups[g.path] = group
        set_gaps(layout.groups, self.groups)
        self.edges = EdgeLayer(layout, edge_label, {name: look.subtitle for name, look in looks.items()})
        scene.addItem(self.edges)
        for n in layout.nodes:
            item = node_item(n, looks[n.node])  # a node's box, or a weight's row inside its user's box
            self._paint_overlay(item)
            scene.addItem(item)
            self.nodes[n.node] = item
        for px in layout.proxies:
            proxy = ProxyItem(px.hub, px.x, px.y)
            scene.addItem(proxy)
            self.proxies.append(proxy)
        self.drawing = scene.itemsBoundingRect()  # once per layout: the minimap asks on every resize and scroll
        scene.setSceneRect(self.drawing.adjusted(-40, -40, 40, 40))
        self.setSceneRect(QRectF())  # this view scrolls over the scene's rect again (show_start may widen it)
        self.painted = 0
        if keep_view:
            self.centerOn(center)
        else:
            self.show_start()
        self.scene_shown.emit()

    def reserve_bottom(self, height: int) -> None:
        """Give up `height` pixels under the graph (the overlay's legend, app/graph/overlay_legend.py, sits there, so
        no node is ever under it); 0 gives them back."""
        margins = self.viewportMargins()
        if margins.bottom() != height:
            self.setViewportMargins(0, 0, margins.right(), height)

    def reserve_right(self, width: int) -> None:
        """Give up `width` pixels beside the graph, on its right (the minimap sits there, app/graph/minimap.py)."""
        margins = self.viewportMargins()
        if margins.right() != width:
            self.setViewportMargins(0, 0, width, margins.bottom())

    def groups_in_view(self) -> list[str]:
        """The module groups whose box or frame shows in the viewport now."""
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        return [path for path, item in self.groups.items() if item.sceneBoundingRect().intersects(shown)]

    def set_states(self, nodes: dict[str, HighlightState], groups: dict[str, HighlightState],
                   hot_edges: set[tuple[str, str]],
                   hub: str | None = None) -> None:
        self.selected = None
        for name, item in self.nodes.items():
            s = nodes.get(name, HighlightState.NONE)
            if s == HighlightState.SELECTED:
                self.selected = item
            if item.state != s:
                item.state = s
                item.update()
        for path, group in self.groups.items():
            s = groups.get(path, HighlightState.NONE)
            if s == HighlightState.SELECTED:
                self.selected = group
            if group.state != s:
                group.state = s
                group.update()
        for px in self.proxies:
            s = HighlightState.SELECTED if px.hub == hub else HighlightState.NONE
            if px.state != s:
                px.state = s
                px.update()
        if self.edges is not None:
            self.edges.set_hot(hot_edges)
        self.states_changed.emit()

    @property
    def heat(self) -> dict[str, float]:
        """The shown scale overlay's levels (a run's per-node time: 1.0 for the slowest node); {} without one."""
        return dict(self.overlay.levels) if self.overlay is not None else {}

    def set_overlay(self, overlay: Overlay | None) -> None:
        """Paint an overlay (core/graph/overlays.py) over the nodes' kind colours; None: kind colours again."""
        self.overlay = overlay
        for item in self.nodes.values():
            self._paint_overlay(item)
        if overlay is None:
            self.set_group_values({})

    def set_group_values(self, values: dict[str, GroupValue]) -> None:
        """Paint each collapsed group in the overlay's colour for its aggregate (`core.graph.overlays.group_values`:
        sum of bytes or time, max of an error), the aggregate in its tooltip; groups without one in their own."""
        name = self.overlay.name if self.overlay is not None else ""
        for path, item in self.groups.items():
            gv = values.get(path)
            if gv is None:
                item.set_overlay(None)
            else:
                item.set_overlay(theme.overlay_scale_color(gv.level), f"{name}: {gv.text}")

    def _paint_overlay(self, item: NodeItem) -> None:
        o = self.overlay
        if o is None:
            item.set_overlay(None)
        elif item.name in o.categories:
            item.set_overlay(theme.overlay_category_color(o.categories[item.name]), f"{o.name}: {o.text(item.name)}")
        elif item.name in o.levels:
            level = o.levels[item.name]
            item.set_overlay(theme.overlay_scale_color(level), f"{o.name}: {o.text(item.name)}", level)
        else:
            item.set_overlay(theme.overlay_missing(), f"{o.name}: no value")

    def _item(self, item_id: str) -> GroupItem | NodeItem | None:
        """The item drawn for an id: a node's box (or a weight's row), or a group's box by its id."""
        path = group_of(item_id)
        return self.groups.get(path) if path is not None else self.nodes.get(item_id)

    def center_on_item(self, item_id: str) -> None:
        item = self._item(item_id)
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

    def viewport_now(self) -> framing.Viewport:
        """The viewport as core/graph/framing.py judges it: its size, the least readable zoom, the overlay's inset."""
        view = self.viewport().rect()
        return framing.Viewport(view.width(), view.height(), READABLE_SCALE, self.start_inset)

    def show_start(self) -> None:
        """The first view: the whole graph if it stays readable; otherwise where the program starts (its inputs and
        the items they feed, as many as fit: `SceneLayout.start`) at a readable zoom, that region at the top."""
        self._show(framing.start_frame)

    def show_fit(self) -> framing.Frame | None:
        """Fit: the whole graph if it stays readable; otherwise zoomed out to the legibility floor with the start at
        the top. Returns the frame shown (None without a graph)."""
        return self._show(framing.fit_frame)

    def _show(self, frame_of: Callable[[framing.Rect, list[framing.Rect], int, framing.Viewport], framing.Frame]
              ) -> framing.Frame | None:
        if self.layout is None:
            self.fit()
            return None
        drawing = self.scene().sceneRect()
        frame = frame_of((drawing.x(), drawing.y(), drawing.width(), drawing.height()), self.layout.start,
                         self.layout.start_inputs, self.viewport_now())
        if frame.whole:
            self.setSceneRect(QRectF())
            self.fit()
            return frame
        self.resetTransform()
        self.scale(frame.scale, frame.scale)
        # this view may scroll past the drawing's edge so the start sits where the frame puts it
        self.setSceneRect(self.scene().sceneRect().united(QRectF(*frame.shown)))
        self.centerOn(*frame.center)
        self.view_changed.emit()
        return frame

    def scroll_to_item(self, item_id: str) -> None:
        """Centre on an item (a node, or a collapsed group by its id) at the present zoom."""
        item = self._item(item_id)
        if item is not None:
            self.centerOn(item)

    def selected_rect(self) -> QRect | None:
        """Where the selected item is in the viewport (pixels); None without one."""
        item = self.selected  # the minimap asks on every scroll: no walk over ten thousand items
        if item is None or item.state != HighlightState.SELECTED:
            return None
        return self.mapFromScene(item.sceneBoundingRect()).boundingRect()

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta().y()
        if delta:
            self.zoom(1.0015 ** delta)
        event.accept()

    # -- clicks ------------------------------------------------------------------------------------------------
    def _item_at(self, pos) -> QGraphicsItem | None:
        for item in self.items(pos):
            if isinstance(item, (NodeItem, ProxyItem)):
                return item
            if isinstance(item, GroupItem):
                return item
        return None

    def mousePressEvent(self, event) -> None:
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

    def mouseDoubleClickEvent(self, event) -> None:
        item = self._item_at(event.position().toPoint())
        if isinstance(item, GroupItem):
            self.group_toggled.emit(item.path)
            return
        if isinstance(item, NodeItem):
            self.node_double_clicked.emit(item.name)
            return
        super().mouseDoubleClickEvent(event)

    def keyPressEvent(self, event) -> None:
        """Arrow keys walk the graph from the selection (the document decides where to); without a selection, or
        with a modifier, they scroll as usual."""
        steps = {Qt.Key.Key_Up: "up", Qt.Key.Key_Down: "down", Qt.Key.Key_Left: "left", Qt.Key.Key_Right: "right"}
        step = steps.get(Qt.Key(event.key()))
        if step is not None and self.has_selection and event.modifiers() in (
                Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier):
            self.step_requested.emit(step)
            event.accept()
            return
        super().keyPressEvent(event)

    @property
    def has_selection(self) -> bool:
        return any(i.state == HighlightState.SELECTED for i in self.nodes.values()) or any(
            i.state == HighlightState.SELECTED for i in self.groups.values()) or any(
            p.state == HighlightState.SELECTED for p in self.proxies)

    def contextMenuEvent(self, event) -> None:
        item = self._item_at(event.pos())
        if isinstance(item, NodeItem):
            item_id = item.name
        elif isinstance(item, ProxyItem):
            item_id = item.hub
        elif isinstance(item, GroupItem):
            item_id = group_item(item.path)
        else:
            item_id = ""
        self.context_requested.emit(item_id, event.globalPos())
        event.accept()

    def changeEvent(self, event) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            theme.refresh()
            self.setBackgroundBrush(QBrush(self.palette().base()))
            self.palette_changed.emit()
        super().changeEvent(event)

    @contextmanager
    def plain(self) -> Iterator[None]:
        """The scene without the selection, neighbours, matches and marks, while an export renders it: a PNG or SVG
        of the graph shows the graph, not where the user last clicked."""
        items: list[NodeItem | GroupItem | ProxyItem] = [*self.nodes.values(), *self.groups.values(), *self.proxies]
        states = [i.state for i in items]
        hot = self.edges.hot if self.edges is not None else None
        for i in items:
            i.state = HighlightState.NONE
        if self.edges is not None:
            self.edges.hot = QPainterPath()
        try:
            yield
        finally:
            for i, s in zip(items, states):
                i.state = s
            if self.edges is not None and hot is not None:
                self.edges.hot = hot

    def tooltip_text(self, item: QGraphicsItem) -> str:
        """A node's tooltip: what `describe` (the document's, core/graph/details.node_tooltip) says about it (target,
        module path, types, users), then the overlay's figure the item carries; other items keep their own."""
        if isinstance(item, NodeItem) and self.describe is not None:
            rich = self.describe(item.name)
            if rich:
                own = item.toolTip()
                return rich + own[len(item.tip):] if own.startswith(item.tip) else rich
        return item.toolTip()

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.ToolTip and self.describe is None:
            item = self._item_at(event.pos())  # type: ignore[attr-defined]
            if isinstance(item, NodeItem):
                item.dress()  # the scene shows the item's own tooltip, set when its looks are first needed
        elif event.type() == QEvent.Type.ToolTip:
            pos = event.pos()  # type: ignore[attr-defined]
            item = self._item_at(pos)
            if isinstance(item, NodeItem):
                item.dress()  # its tooltip is set when its looks are first needed
                QToolTip.showText(event.globalPos(), self.tooltip_text(item), self.viewport())  # type: ignore[attr-defined]
                return True
        return super().viewportEvent(event)

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        self.painted += 1

    def drawForeground(self, painter: QPainter, rect: QRectF | QRect) -> None:  # noqa: N802 (Qt's name)
        super().drawForeground(painter, rect)
        self.titles.paint(painter)
