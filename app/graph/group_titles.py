"""The graph's foreground: module groups' titles, sticky and never overlapping, and the breadcrumb, the module path at
the view's centre (`layer3 › 2: Bottleneck › conv2`), on the top row. Drawn by `GraphView.drawForeground` in screen
pixels, so they are readable at any zoom; where each goes is core/graph/title_placement.py's decision. Expanded
frames leave their titles to this (`GroupItem.titled_by_view`)."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QGraphicsView

from pt2_viewer.app import theme
from pt2_viewer.app.graph.items import GroupItem
from pt2_viewer.core.graph.drawing import SceneLayout
from pt2_viewer.core.graph.title_placement import Frame, PlacedTitle, Rect, breadcrumb, place_titles

TITLE_PX = 12  # titles on screen, whatever the zoom
ROW = 17.0
SEP = "  ›  "


def title_font() -> QFont:
    f = QFont()
    f.setPixelSize(TITLE_PX)
    f.setBold(True)
    return f


CELL = 400.0  # scene units per cell of the node-box grid


def _cells(x: float, y: float, w: float, h: float) -> list[tuple[int, int]]:
    return [(i, j) for i in range(int(x // CELL), int((x + w) // CELL) + 1)
            for j in range(int(y // CELL), int((y + h) // CELL) + 1)]


class GroupTitles:
    """Measures and paints; `placed` and `crumbs` are the last paint's (tests and tooltips read them). Given the view
    (for its geometry), its group items by path, and the layout it shows now; not the whole `GraphView`."""

    def __init__(self, view: QGraphicsView, groups: Mapping[str, GroupItem],
                 layout: Callable[[], SceneLayout | None]) -> None:
        self.view = view
        self.groups = groups
        self.layout = layout
        self.font = title_font()
        self.metrics = QFontMetricsF(self.font)
        self.placed: list[PlacedTitle] = []
        self.crumbs: list[Frame] = []
        self._grid_of: SceneLayout | None = None  # the layout `_grid` indexes
        self._grid: dict[tuple[int, int], list[Rect]] = {}  # node boxes by CELL x CELL scene cell

    def frames(self) -> list[Frame]:
        """The expanded frames on screen, in screen pixels. From the layout's own numbers (no Qt call per group:
        a 10k-node program has a thousand frames, and this runs on every paint)."""
        view = self.view
        shown = view.mapToScene(view.viewport().rect()).boundingRect()
        left, top, right, bottom = shown.left(), shown.top(), shown.right(), shown.bottom()
        t = view.viewportTransform()
        sx, sy, dx, dy = t.m11(), t.m22(), t.dx(), t.dy()
        out = []
        for path, item in self.groups.items():
            b = item.box
            if not b.expanded or b.x > right or b.y > bottom or b.x + b.w < left or b.y + b.h < top:
                continue
            out.append(Frame(path, item.title, (b.x * sx + dx, b.y * sy + dy, b.w * sx, b.h * sy), b.depth))
        return out

    def breadcrumb_text(self) -> str:
        return SEP.join(self.groups[f.path].box.title for f in self.crumbs)

    def _covers_node(self, rect: Rect) -> bool:
        """Whether a rect on screen covers a node box, from a grid of the layout's boxes (built once per layout)."""
        view = self.view
        layout = self.layout()
        if layout is None:
            return False
        if self._grid_of is not layout:
            self._grid_of, self._grid = layout, {}
            for n in layout.nodes:
                for key in _cells(n.x, n.y, n.w, n.h):
                    self._grid.setdefault(key, []).append((n.x, n.y, n.w, n.h))
        r = view.mapToScene(QRectF(*rect).toAlignedRect()).boundingRect()
        x, y, w, h = r.x(), r.y(), r.width(), r.height()
        return any(bx < x + w and x < bx + bw and by < y + h and y < by + bh
                   for key in _cells(x, y, w, h) for bx, by, bw, bh in self._grid.get(key, ()))

    def paint(self, p: QPainter) -> None:
        view = self.view
        frames = self.frames()
        vp = view.viewport().rect()
        self.crumbs = breadcrumb(frames, vp.center().x(), vp.center().y())
        top = ROW + 2 if self.crumbs else 0.0
        self.placed = place_titles(frames, vp.width(), vp.height(), ROW, top, self.metrics.horizontalAdvance,
                                   self._covers_node)
        if not frames:
            return
        p.save()
        p.resetTransform()
        p.setFont(self.font)
        plate = QColor(theme.graph_color("edge_label_back"))
        plate.setAlpha(235)
        text = theme.graph_color("group_title")
        for t in self.placed:
            r = QRectF(*t.rect)
            p.fillRect(r, plate)
            p.setPen(text)
            shown = self.metrics.elidedText(t.text, Qt.TextElideMode.ElideRight, r.width() - 8)
            p.drawText(r.adjusted(4, 0, -2, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, shown)
        if self.crumbs:
            words = self.breadcrumb_text()
            width = min(self.metrics.horizontalAdvance(words) + 16, vp.width() - 8)
            r = QRectF(4, 1, width, ROW)
            back = QColor(theme.graph_color("minimap_back"))
            back.setAlpha(240)
            p.fillRect(r, back)
            p.setPen(theme.text_color())
            p.drawText(r.adjusted(8, 0, -4, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       self.metrics.elidedText(words, Qt.TextElideMode.ElideLeft, r.width() - 12))
        p.restore()



