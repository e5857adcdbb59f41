"""The graph's scene items: one light item per node, group and hub reference (the edges, batched per tile, are
app/graph/edge_layer.py's).

Following Qt's 40,000-chip example: detail by zoom level (a plain box when zoomed out, text when close), looks
computed once per item, when first needed (a node's on its first detailed paint or hover: Expand all builds 10k
items, and draws a few hundred), no per-item caches rebuilt on zoom. `GraphView` (view.py) places them from a
`SceneLayout`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPen,
)
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from pt2_viewer.app import theme
from pt2_viewer.core.graph import framing
from pt2_viewer.core.graph.document import Look
from pt2_viewer.core.graph.drawing import NODE_H, PROXY_H, GroupBox, NodeBox
from pt2_viewer.core.graph.highlight_state import HighlightState
from pt2_viewer.core.graph.summary import group_count_text, group_count_tip

# Level of detail, by the zoom (QStyleOptionGraphicsItem.levelOfDetailFromTransform), as in Qt's 40,000-chip example:
OVERVIEW_LOD = 0.12  # below: nodes are plain coloured boxes
DETAIL_LOD = 0.45  # below: nodes are boxes with their op name in big type (the overview); above: both lines of text
PROXY_TEXT_LOD = 0.45  # below: hub references are faint marks; above: `↳ name` chips, as soon as the nodes beside
# them print their text (DETAIL_LOD): a chip left as an empty bar beside a readable node says nothing
LABEL_LOD = 0.9  # above: edges that carry something the nodes do not print are labelled
ALL_LABELS_LOD = 1.6  # above: every edge is labelled
OVERVIEW_TEXT_PX = 12.0  # group titles at overview scale: this many pixels high on screen


def _font(px: int, bold: bool = False) -> QFont:
    """A font sized in scene units (pixels at 1:1), so text keeps its place in the boxes on any screen."""
    f = QFont()
    f.setPixelSize(px)
    f.setBold(bold)
    return f


_TITLE_FONT = _font(12, bold=True)
_SUB_FONT = _font(11)
_GROUP_FONT = _font(11, bold=True)
_COUNT_FONT = _font(10)
_PROXY_FONT = _font(11)
_ROW_FONT = _font(11)
_ROW_BADGE_FONT = _font(9, bold=True)



def font_px(font: QFont) -> float:
    """A font's height in scene units: its em, the height a label is said to have (`label_px`)."""
    return float(font.pixelSize())


def readable_scale() -> float:
    """The least zoom at which every item's label is legible on screen (core/graph/framing.py's MIN_LABEL_PX): nodes'
    titles, weight rows and hub references (the smallest of them decides)."""
    return framing.readable_scale(min(font_px(_TITLE_FONT), font_px(_ROW_FONT), font_px(_PROXY_FONT)))


_ROW_BADGE = {"parameter": "P", "buffer": "B", "constant": "C"}


def _fitted_font(text: str, w: float, h: float) -> QFont:
    """A bold font, in scene units, as big as fits `text` on one line in w x h (the overview's op names)."""
    f = QFont()
    f.setBold(True)
    f.setPixelSize(100)
    width = max(1.0, QFontMetricsF(f).horizontalAdvance(text))
    f.setPixelSize(max(1, int(min(h * 0.62, 100 * w / width))))
    return f


class NodeItem(QGraphicsItem):
    """One node. Built light: a box in place, nothing more. Its looks (colours, fonts, elided texts, tooltip) are
    computed once, on first use (`dress`: its first detailed paint, a hover, an overlay), so an expanded 10k-node
    graph does not compute ten thousand looks for the few hundred items on screen; paint() then only draws."""

    _dressed = False
    # what `dress` sets: reading one of these on an item not dressed yet dresses it (__getattr__)
    DRESS = frozenset({"kind_fill", "text_color", "head", "top", "bottom", "stripe", "subtitle", "title_text",
                       "overview_font", "tip", "fill", "overview_fill", "pen", "detail_text", "overview_text"})

    def __init__(self, box: NodeBox, look: Look) -> None:
        super().__init__()
        self.name = box.node
        self.box = box
        self.look = look
        self.title = box.title or look.title  # a leaf module's box is titled with the module (`conv1: Conv2d`)
        self.rect = QRectF(0, 0, box.w, box.h)
        self.bounds = QRectF(-2, -2, box.w + 4, box.h + 4)
        self.state = HighlightState.NONE
        self.kind_overview = _overview_color(look.kind)  # all a zoomed-out paint needs
        self.setPos(box.x, box.y)
        self.setZValue(2)
        self.overlay_fill: QColor | None = None  # an overlay's colour for this node (None: no overlay shown)
        self.overlay_stripe = False  # the kind colour as a stripe at the left, under an overlay
        self.heat: float | None = None  # the node's level (0..1) in a scale overlay (a run's time), else None

    def __getattr__(self, name: str) -> object:  # only for attributes not set yet
        if name in self.DRESS and not self._dressed:
            self.dress()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def dress(self) -> None:
        """Compute the looks paint() and the tooltip use (once)."""
        if self._dressed:
            return
        self._dressed = True
        box, look = self.box, self.look
        self.kind_fill = theme.kind_color(look.kind)
        self.text_color = theme.text_color()
        head = min(box.h, NODE_H)  # the op's own lines; weight rows (their own items) fill the rest
        self.head = QRectF(0, 0, box.w, head)
        self.top = QRectF(6, 2, box.w - 12, head / 2)
        self.bottom = QRectF(4, head / 2 - 1, box.w - 8, head / 2)
        self.stripe = QRectF(0, 0, 5, box.h)
        self.subtitle = QFontMetricsF(_SUB_FONT).elidedText(look.subtitle, Qt.TextElideMode.ElideRight,
                                                            self.bottom.width())
        self.title_text = QFontMetricsF(_TITLE_FONT).elidedText(self.title, Qt.TextElideMode.ElideRight,
                                                                self.top.width())
        self.overview_font = _fitted_font(self.title, box.w - 8, head)
        self.tip = f"{box.node}\n{look.subtitle}" + (f"\n{look.title} in {box.module}" if box.module else "")
        self.setToolTip(self.tip)
        self._set_fills()

    def toolTip(self) -> str:  # noqa: N802 (Qt's name): a Python caller reads the tooltip of a dressed item
        self.dress()
        return super().toolTip()

    @property
    def heat_fill(self) -> QColor | None:
        """The overlay colour painted on the node (None: its kind colour)."""
        return self.overlay_fill

    def _set_fills(self) -> None:
        fill = self.overlay_fill or self.kind_fill
        self.fill = fill
        self.overview_fill = self.overlay_fill or self.kind_overview
        self.pen = QPen(theme.node_border(fill), 1)
        self.detail_text = theme.overlay_text_color(fill) if self.overlay_fill is not None else self.text_color
        self.overview_text = theme.overlay_text_color(self.overview_fill)

    def set_overlay(self, fill: QColor | None, text: str | None = None, level: float | None = None) -> None:
        """Paint the node in an overlay's colour (the kind colour stays as a stripe); None: its kind colour."""
        self.heat = level
        if fill == self.overlay_fill:
            return
        self.overlay_fill = fill
        self.overlay_stripe = fill is not None
        self._set_fills()
        self.setToolTip(self.tip + (f"\n{text}" if text else ""))
        self.update()

    def boundingRect(self) -> QRectF:
        return self.bounds

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())
        border = _STATE_PENS.get(self.state)
        if lod < DETAIL_LOD:
            if lod < OVERVIEW_LOD:  # a plain box: no looks needed (the minimap, a 10k-node graph zoomed out)
                p.fillRect(self.rect, border.color() if border is not None else self.overlay_fill or self.kind_overview)
                return
            p.fillRect(self.rect, self.overview_fill)
            if border is not None:
                p.setPen(QPen(border.color(), 3 / lod))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(self.rect)
            if lod >= OVERVIEW_LOD:
                p.setPen(self.overview_text)
                p.setFont(self.overview_font)
                p.drawText(self.head, Qt.AlignmentFlag.AlignCenter, self.title)
            return
        p.setPen(border or self.pen)
        p.setBrush(self.fill)
        p.drawRoundedRect(self.rect, 5, 5)
        if self.overlay_stripe:
            p.fillRect(self.stripe.adjusted(1, 3, 0, -3), self.kind_overview)
        p.setPen(self.detail_text)
        p.setFont(_TITLE_FONT)
        p.drawText(self.top, Qt.AlignmentFlag.AlignCenter, self.title_text)
        p.setFont(_SUB_FONT)
        p.drawText(self.bottom, Qt.AlignmentFlag.AlignCenter, self.subtitle)

    def label_px(self, lod: float) -> float:
        """How high the title is drawn on screen at this zoom (0: not drawn), as paint() draws it."""
        if lod >= DETAIL_LOD:
            return font_px(_TITLE_FONT) * lod
        return float(self.overview_font.pixelSize()) * lod if lod >= OVERVIEW_LOD else 0.0


class WeightRowItem(NodeItem):
    """A parameter, buffer or constant drawn as a row of the op that uses it: a badge for its signature kind (P, B,
    C), its name and its type. It is still that node's item: selecting, highlighting and overlays reach it."""

    DRESS = NodeItem.DRESS | {"badge", "badge_rect", "label", "type_text", "text_rect"}

    def __init__(self, box: NodeBox, look: Look) -> None:
        super().__init__(box, look)
        self.setZValue(3)

    def dress(self) -> None:
        if self._dressed:
            return
        super().dress()
        box, look = self.box, self.look
        self.badge = _ROW_BADGE.get(look.kind, "?")
        self.badge_rect = QRectF(2, 2, 14, box.h - 4)
        text_rect = QRectF(20, 0, box.w - 24, box.h)
        metrics = QFontMetricsF(_ROW_FONT)
        label = box.title + ("  (unused)" if box.unused else "")
        type_w = metrics.horizontalAdvance(look.subtitle)
        room = text_rect.width() - type_w - 8
        if room < metrics.horizontalAdvance(label):  # too narrow for both: the name keeps what it can
            room = max(text_rect.width() * 0.5, room)
        self.label = metrics.elidedText(label, Qt.TextElideMode.ElideRight, room)
        self.type_text = metrics.elidedText(look.subtitle, Qt.TextElideMode.ElideLeft,
                                            text_rect.width() - metrics.horizontalAdvance(self.label) - 8)
        self.text_rect = text_rect
        kind = {"parameter": "parameter", "buffer": "buffer"}.get(look.kind, "constant")
        self.tip = (f"{box.node}: {kind} {box.title}\n{look.subtitle}\nused by {box.host}" if not box.unused
                    else f"{box.node}: {kind} {box.title}\n{look.subtitle}\nfeeds nothing")
        self.setToolTip(self.tip)

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())
        border = _STATE_PENS.get(self.state)
        if lod < DETAIL_LOD:
            fill = self.overlay_fill or self.kind_overview  # the overview fill, without dressing the item
            p.fillRect(self.rect.adjusted(0, 3, 0, -3), border.color() if border is not None else fill)
            return
        p.setPen(border or Qt.PenStyle.NoPen)
        p.setBrush(self.fill)
        p.drawRoundedRect(self.rect.adjusted(0, 1, 0, -1), 3, 3)
        p.fillRect(self.badge_rect, self.kind_overview)
        p.setFont(_ROW_BADGE_FONT)
        p.setPen(self.overview_text)
        p.drawText(self.badge_rect, Qt.AlignmentFlag.AlignCenter, self.badge)
        p.setPen(self.detail_text)
        p.setFont(_ROW_FONT)
        p.drawText(self.text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, self.label)
        p.drawText(self.text_rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, self.type_text)

    def label_px(self, lod: float) -> float:
        return font_px(_ROW_FONT) * lod if lod >= DETAIL_LOD else 0.0


_MEMO: dict[tuple[object, ...], object] = {}
_T = TypeVar("_T")


def _memo(key: tuple[object, ...], make: Callable[[], _T]) -> _T:
    """`make()`, computed once per key and palette (light or dark) and shared by every item: never changed in place."""
    full = (*key, theme.is_dark())
    if full not in _MEMO:
        _MEMO[full] = make()
    return _MEMO[full]  # type: ignore[return-value]  # stored by this function for this key


_OVERVIEW: dict[tuple[str, bool], QColor] = {}


def _overview_color(kind: str) -> QColor:
    """`theme.kind_overview_color(kind)` once per kind and palette: asked for every node item built."""
    key = (kind, theme.is_dark())
    color = _OVERVIEW.get(key)
    if color is None:
        color = _OVERVIEW[key] = theme.kind_overview_color(kind)
    return color


def node_item(box: NodeBox, look: Look) -> NodeItem:
    """The item that draws a node's box: its own, or a row of its user's box for a folded weight."""
    return WeightRowItem(box, look) if box.kind == "weight_row" else NodeItem(box, look)


_STATE_PENS = {HighlightState.NEIGHBOUR: QPen(theme.NEIGHBOUR, 3), HighlightState.SELECTED: QPen(theme.HIGHLIGHT, 3),
               HighlightState.MATCH: QPen(theme.MATCH, 3)}


class GroupItem(QGraphicsItem):
    """A module group: an expanded group's frame with its title, or a collapsed group's box. Its look (pens,
    brushes, texts, the overview font) is computed once here, as a node's is."""

    def __init__(self, box: GroupBox) -> None:
        super().__init__()
        self.path = box.path
        self.box = box
        self.rect = QRectF(0, 0, box.w, box.h)
        self.state = HighlightState.NONE
        self.setPos(box.x, box.y)
        self.setZValue(1 if box.expanded else 2)
        self.tip = f"{box.path or '(model)'}  ({group_count_tip(box.ops, box.count)})\nDouble-click to " \
                   f"{'collapse' if box.expanded else 'expand'}"
        self.setToolTip(self.tip)
        self.title = f"{'▾' if box.expanded else '▸'} {box.title}"
        self.gap_above = float("inf")  # scene distance from the enclosing frame's top (set by the view)
        self.titled_by_view = False  # an expanded frame's title is drawn by the view (app/graph/group_titles.py)
        self.title_color = theme.graph_color("group_title")
        if box.expanded:
            frame = theme.graph_color("group_frame")
            self.tint = theme.group_tint(box.depth)
            self.pen = QPen(frame, 1, Qt.PenStyle.DashLine)
            self.state_pen = QPen(theme.HIGHLIGHT, 2, Qt.PenStyle.DashLine)
            self.title_rect = QRectF(10, 4, max(1.0, box.w - 20), 20)
            metrics = QFontMetricsF(_GROUP_FONT)
            self.title_width = metrics.horizontalAdvance(self.title)
            self.title_height = metrics.height()
            self.plate = theme.graph_color("edge_label_back")
        else:
            self.fill = theme.graph_color("group_box")
            self.overview_fill = theme.graph_color("group_box_overview")
            self.own_fills = (self.fill, self.overview_fill, self.title_color)  # set_overlay paints over these
            self.pen = QPen(self.fill.darker(150), 1.2)
            self.state_pen = QPen(theme.HIGHLIGHT, 3)
            self.stack_pen = QPen(self.fill.darker(170), 1)
            self.count_text = group_count_text(box.ops, box.count)  # what the tooltip and the report say too
            self.overview_font = _fitted_font(box.title, box.w - 8, box.h)
            self.overview_text = theme.overlay_text_color(self.overview_fill)

    def set_overlay(self, fill: QColor | None, text: str | None = None) -> None:
        """A collapsed group in an overlay's colour for its aggregate (app/graph/view.py); None: its own colours."""
        if self.box.expanded:
            return
        if fill is None:
            self.fill, self.overview_fill, self.title_color = self.own_fills
        else:  # the title and count stay readable on the overlay's colour
            self.fill = self.overview_fill = fill
            self.title_color = theme.overlay_text_color(fill)
        self.overview_text = theme.overlay_text_color(self.overview_fill)
        self.setToolTip(self.tip + (f"\n{text}" if text else ""))
        self.update()

    def boundingRect(self) -> QRectF:
        return self.rect.adjusted(-2, -2, 2, 2)

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())
        if self.box.expanded:  # in the view (a widget), the view draws the title; in an export, the frame does
            self._paint_frame(p, lod, titled=not (self.titled_by_view and widget is not None))
        else:
            self._paint_box(p, lod)

    def _paint_frame(self, p: QPainter, lod: float, titled: bool = True) -> None:
        p.setBrush(self.tint)
        p.setPen(self.state_pen if self.state else self.pen)
        p.drawRoundedRect(self.rect, 8, 8)
        if not titled:
            return
        scale = OVERVIEW_TEXT_PX / lod / self.title_height
        if scale <= 1.0:  # close enough to read the title at its own size
            p.setPen(self.title_color)
            p.setFont(_GROUP_FONT)
            p.drawText(self.title_rect, Qt.AlignmentFlag.AlignLeft, self.title)
            return
        # Zoomed out: the title stays OVERVIEW_TEXT_PX high on screen, on a plate, while the frame is big enough on
        # screen and its top far enough below the enclosing frame's top that the two titles do not collide.
        if (self.rect.width() * lod < 80 or self.rect.height() * lod < 3 * OVERVIEW_TEXT_PX
                or self.gap_above * lod < OVERVIEW_TEXT_PX + 6):
            return
        scale = min(scale, (self.rect.width() - 12) / max(1.0, self.title_width))
        p.save()
        p.translate(6, 4)
        p.scale(scale, scale)
        r = QRectF(0, 0, self.title_width + 8, self.title_height + 2)
        p.fillRect(r, self.plate)
        p.setPen(self.title_color)
        p.setFont(_GROUP_FONT)
        p.drawText(r.adjusted(4, 0, 0, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, self.title)
        p.restore()

    def label_px(self, lod: float) -> float:
        """How high the title is drawn on screen at this zoom (0: not drawn), as paint() draws it."""
        if not self.box.expanded:
            if lod >= DETAIL_LOD:
                return font_px(_TITLE_FONT) * lod
            return float(self.overview_font.pixelSize()) * lod if lod >= OVERVIEW_LOD else 0.0
        scale = OVERVIEW_TEXT_PX / lod / self.title_height
        if scale <= 1.0:
            return font_px(_GROUP_FONT) * lod
        if (self.rect.width() * lod < 80 or self.rect.height() * lod < 3 * OVERVIEW_TEXT_PX
                or self.gap_above * lod < OVERVIEW_TEXT_PX + 6):
            return 0.0
        return font_px(_GROUP_FONT) * min(scale, (self.rect.width() - 12) / max(1.0, self.title_width)) * lod

    def _paint_box(self, p: QPainter, lod: float) -> None:
        if lod < DETAIL_LOD:
            p.fillRect(self.rect, theme.HIGHLIGHT if self.state else self.overview_fill)
            if lod >= OVERVIEW_LOD:
                p.setPen(self.overview_text)
                p.setFont(self.overview_font)
                p.drawText(self.rect, Qt.AlignmentFlag.AlignCenter, self.box.title)
            return
        p.setPen(self.state_pen if self.state else self.pen)
        p.setBrush(self.fill)
        p.drawRoundedRect(self.rect, 6, 6)
        # A second offset border: a stack of nodes hides inside.
        p.setPen(self.stack_pen)
        p.drawLine(QPointF(6, self.rect.height() + 2), QPointF(self.rect.width() - 2, self.rect.height() + 2))
        p.setPen(self.title_color)
        p.setFont(_TITLE_FONT)
        p.drawText(QRectF(6, 3, self.rect.width() - 12, 20), Qt.AlignmentFlag.AlignCenter, self.title)
        p.setFont(_COUNT_FONT)
        p.drawText(QRectF(6, 22, self.rect.width() - 12, 18), Qt.AlignmentFlag.AlignCenter, self.count_text)


class ProxyItem(QGraphicsItem):
    """A small reference to a hub node, drawn beside a consumer instead of a long edge. Zoomed out it is a faint
    mark: it must never be the darkest thing on the screen."""

    def __init__(self, hub: str, x: float, y: float) -> None:
        super().__init__()
        self.hub = hub
        self.state = HighlightState.NONE
        self.text = f"↳ {hub}"
        # a hub has hundreds of references: its width and the palette's colours are computed once, and shared
        width = _memo(("proxy width", self.text), lambda: QFontMetricsF(_PROXY_FONT).horizontalAdvance(self.text))
        self.rect = QRectF(0, 0, width + 8, PROXY_H)
        self.color, self.back, self.faded, self.text_color = _memo(("proxy colours",), lambda: (
            theme.graph_color("proxy"), theme.graph_color("proxy_back"), theme.graph_color("proxy_faded"),
            theme.text_color()))
        self.setPos(x, y)
        self.setZValue(3)
        self.setToolTip(f"Uses hub '{hub}' (many consumers: drawn as a reference). Click to select it.")

    def boundingRect(self) -> QRectF:
        return self.rect

    def label_px(self, lod: float) -> float:
        return font_px(_PROXY_FONT) * lod if lod >= PROXY_TEXT_LOD else 0.0

    def paint(self, p: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(p.worldTransform())
        if lod < PROXY_TEXT_LOD:
            p.fillRect(self.rect, theme.HIGHLIGHT if self.state else self.faded)
            return
        p.setPen(QPen(theme.HIGHLIGHT if self.state else self.color, 1))
        p.setBrush(self.back)
        p.drawRoundedRect(self.rect, 3, 3)
        p.setFont(_PROXY_FONT)
        p.setPen(self.text_color)
        p.drawText(self.rect, Qt.AlignmentFlag.AlignCenter, self.text)


def set_gaps(boxes: list[GroupBox], items: dict[str, GroupItem]) -> None:
    """Each expanded frame's distance below the top of the innermost frame around it (one level up), so overview
    titles of nested frames do not print over each other."""
    by_depth: dict[int, list[GroupBox]] = {}
    for g in boxes:
        if g.expanded:
            by_depth.setdefault(g.depth, []).append(g)
    for g in boxes:
        if not g.expanded:
            continue
        for outer in by_depth.get(g.depth - 1, ()):
            if outer.x <= g.x and outer.y <= g.y and g.x + g.w <= outer.x + outer.w and g.y + g.h <= outer.y + outer.h:
                items[g.path].gap_above = g.y - outer.y
                break
