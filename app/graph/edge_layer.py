"""Every edge of the graph as one scene item, batched per tile (app/graph/items.py has the node, group and hub
items): painting costs the same whether the view shows ten edges or ten thousand."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.graph.items import _SUB_FONT, ALL_LABELS_LOD, DETAIL_LOD, LABEL_LOD
from pt2_viewer.core.graph.drawing import EdgeLine, SceneLayout
from pt2_viewer.core.graph.edge_labels import label_adds_information


def _edge_path(e: EdgeLine) -> QPainterPath:
    """Graphviz's own spline when the edge was laid out with both ends, else a vertical S-curve."""
    pts = e.route
    if _is_spline(pts):
        path = QPainterPath(QPointF(*pts[0]))
        for i in range(1, len(pts) - 1, 3):
            path.cubicTo(QPointF(*pts[i]), QPointF(*pts[i + 1]), QPointF(*pts[i + 2]))
        return path
    return _curve(e.p0, e.p1)


def _is_spline(pts: tuple[tuple[float, float], ...]) -> bool:
    return len(pts) >= 4 and (len(pts) - 1) % 3 == 0


def _curve(p0: tuple[float, float], p1: tuple[float, float]) -> QPainterPath:
    path = QPainterPath(QPointF(*p0))
    dy = max(20.0, abs(p1[1] - p0[1]) * 0.5)
    path.cubicTo(QPointF(p0[0], p0[1] + dy), QPointF(p1[0], p1[1] - dy), QPointF(*p1))
    return path


TILE = 800.0  # edges are batched into one path per tile of the scene; paint() draws only exposed tiles


class Tile:
    """The edges starting in one tile of the scene: their bounds at once (from the curves' control points, which
    enclose them, and the arrowheads), their paths when the tile is first painted (an expanded 10k-node graph has
    thousands of edges, and a view shows a few tiles)."""

    def __init__(self, edges: list[EdgeLine]) -> None:
        self.edges = edges
        points = [pt for e in edges for pt in e.route] + [e.p0 for e in edges] + [e.p1 for e in edges]
        xs, ys = [x for x, _ in points], [y for _, y in points]
        dy = max((max(20.0, abs(e.p1[1] - e.p0[1]) * 0.5) for e in edges if not _is_spline(e.route)),
                 default=0.0)  # how far a _curve's control points reach beyond its ends
        left, top = min(xs), min(ys)
        self.rect = QRectF(left - 6, top - 9 - dy, max(xs) - left + 12, max(ys) - top + 11 + 2 * dy)
        self._paths: tuple[QPainterPath, QPainterPath] | None = None

    def paths(self) -> tuple[QPainterPath, QPainterPath]:
        """The edges' curves, and their arrowheads."""
        if self._paths is None:
            path, arrows = QPainterPath(), QPainterPath()
            for e in self.edges:
                path.addPath(_edge_path(e))
                x, y = e.p1
                arrows.moveTo(x - 4, y - 7)
                arrows.lineTo(x, y)
                arrows.lineTo(x + 4, y - 7)
            self._paths = (path, arrows)
        return self._paths


class EdgeLayer(QGraphicsItem):
    """Every edge, batched: one path (and one arrowhead path) per scene tile, so painting costs the same whether the
    view shows ten edges or ten thousand; highlighted edges in a separate path on top.

    Labels: an edge is labelled only where the label adds information (core/graph/edge_labels.py) or the view is
    zoomed in close, and never on top of another label: each paint places labels one by one and skips any that would
    overlap one already placed."""

    def __init__(self, layout: SceneLayout, label_of: Callable[[EdgeLine], str],
                 subtitles: dict[str, str] | None = None) -> None:
        super().__init__()
        self.layout = layout
        self.label_of = label_of
        self.subtitles = subtitles or {}  # node -> the type printed on it
        self.labels: dict[int, tuple[str, bool]] = {}  # edge index -> (label, adds information), on first draw
        self.drawn_labels: list[tuple[QRectF, str, EdgeLine]] = []  # the last paint's labels (scene rects)
        tiles: dict[tuple[int, int], list[EdgeLine]] = {}
        for e in layout.edges:
            key = (int(min(e.p0[0], e.p1[0]) // TILE), int(min(e.p0[1], e.p1[1]) // TILE))
            tiles.setdefault(key, []).append(e)
        self.tiles = [Tile(edges) for edges in tiles.values()]
        self.hot = QPainterPath()
        bounds = QRectF()
        for tile in self.tiles:
            bounds = bounds.united(tile.rect)
        self.bounds = bounds.adjusted(-60, -20, 60, 20)
        self.color = theme.graph_color("edge")
        self.label_color = theme.graph_color("edge_label")
        self.label_back = theme.graph_color("edge_label_back")
        self.metrics = QFontMetricsF(_SUB_FONT)
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

    def label(self, i: int, e: EdgeLine) -> tuple[str, bool]:
        known = self.labels.get(i)
        if known is None:
            text = self.label_of(e)
            known = self.labels[i] = (text, label_adds_information(text, self.subtitles.get(e.src)))
        return known

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())
        exposed = option.exposedRect
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(self.color, 1.2 if lod >= DETAIL_LOD else 0))
        for tile in self.tiles:
            if tile.rect.intersects(exposed):
                path, arrows = tile.paths()
                p.drawPath(path)
                if lod >= DETAIL_LOD:
                    p.drawPath(arrows)
        if not self.hot.isEmpty():
            p.setPen(QPen(theme.HIGHLIGHT, 2.5))
            p.drawPath(self.hot)
        self.drawn_labels = []
        if lod >= LABEL_LOD:
            self._paint_labels(p, exposed, every=lod >= ALL_LABELS_LOD)

    def _paint_labels(self, p: QPainter, exposed: QRectF, every: bool) -> None:
        p.setFont(_SUB_FONT)
        h = self.metrics.height()
        placed: list[QRectF] = []
        for i, e in enumerate(self.layout.edges):
            mid = QPointF((e.p0[0] + e.p1[0]) / 2 + 4, (e.p0[1] + e.p1[1]) / 2)
            if not exposed.contains(mid):
                continue
            text, informative = self.label(i, e)
            if not text or not (informative or every):
                continue
            rect = QRectF(mid.x(), mid.y() - h / 2, self.metrics.horizontalAdvance(text) + 4, h)
            if any(rect.intersects(r) for r in placed):
                continue
            placed.append(rect)
            p.fillRect(rect, self.label_back)
            p.setPen(self.label_color)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
            self.drawn_labels.append((rect, text, e))
