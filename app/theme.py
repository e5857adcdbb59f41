"""Colours for node kinds, following the system's light or dark palette. The kinds' and overlays' colours are core's
(core/graph/palette.py, which the HTML report reads too); this module makes them Qt colours and the dark variants."""
from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

from pt2_viewer.core.graph import palette

_LIGHT = palette.KIND_COLOURS
_DARK = {k: QColor(v).darker(240).name() for k, v in _LIGHT.items()}


_dark: bool | None = None


def is_dark() -> bool:
    """Whether the system palette is dark. Read once (painting asks for it per item); `refresh()` on a change."""
    global _dark
    if _dark is None:
        app = QGuiApplication.instance()
        if app is None:
            return False
        _dark = QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
    return _dark


def refresh() -> None:
    global _dark
    _dark = None


def kind_color(kind: str, dark: bool | None = None) -> QColor:
    table = _DARK if (is_dark() if dark is None else dark) else _LIGHT
    return QColor(table.get(kind, table["other"]))


def text_color(dark: bool | None = None) -> QColor:
    return QColor("#e8e8e8") if (is_dark() if dark is None else dark) else QColor("#1a1a1a")


HIGHLIGHT = QColor("#e8710a")
NEIGHBOUR = QColor("#1a73e8")
MATCH = QColor("#d93025")
ALERT_ROW = QColor("#f9d0cc")  # a table row past its threshold (an output that differs, a node that diverges)


# -- the graph view's colours: every colour the graph paints comes from here ------------------------------------------
def _c(light: str, dark: str, dark_mode: bool | None = None) -> QColor:
    return QColor(dark if (is_dark() if dark_mode is None else dark_mode) else light)


# The graph's own colours by role: (light, dark, alpha).
_GRAPH = {
    "edge": ("#9aa3b2", "#77808f", 255),
    "edge_label": ("#4a5262", "#b8c0cc", 255),
    "edge_label_back": ("#ffffff", "#1e1f22", 225),
    "group_frame": ("#8a94a6", "#7d8799", 255),
    "group_box": ("#c7d3e6", "#3a4658", 255),
    "group_box_overview": ("#9fb0cc", "#56657d", 255),  # a collapsed group zoomed out: darker than its fill
    "group_title": ("#2b3445", "#dde3ec", 255),
    "proxy": ("#7a869a", "#9aa6ba", 255),
    "proxy_back": ("#ffffff", "#282828", 200),
    "proxy_faded": ("#b9c1ce", "#4d5463", 120),  # a hub reference zoomed out: fainter than the nodes around it
    "minimap_back": ("#ffffff", "#1e1f22", 200),
    "minimap_frame": ("#9aa3b2", "#5c6370", 255),
}


def graph_color(role: str) -> QColor:
    """One of the graph's colours (`_GRAPH`) for the current palette."""
    light, dark, alpha = _GRAPH[role]
    c = _c(light, dark)
    c.setAlpha(alpha)
    return c


def kind_overview_color(kind: str, dark: bool | None = None) -> QColor:
    """A node's fill when zoomed out to a plain box: the kind colour, saturated so it stays a colour at a few
    pixels (the pastel fill washes out to grey at overview scale)."""
    c = kind_color(kind, dark)
    h, s, v = c.hsvHueF(), c.hsvSaturationF(), c.valueF()  # typed floats (the stubs type getHsvF's tuple loosely)
    if s < 0.08:  # greys stay grey, a shade darker than the pale fill
        return c.darker(115) if not (is_dark() if dark is None else dark) else c.lighter(140)
    if is_dark() if dark is None else dark:
        return QColor.fromHsvF(h, min(1.0, s * 1.6), min(1.0, v * 1.9))
    return QColor.fromHsvF(h, min(1.0, s * 2.2 + 0.1), v * 0.92)


def node_border(fill: QColor) -> QColor:
    return fill.darker(150) if not is_dark() else fill.lighter(160)


def group_tint(depth: int) -> QColor:
    c = graph_color("group_frame")
    c.setAlpha(18 + 10 * (depth % 3))
    return c


def minimap_window_fill() -> QColor:
    c = QColor(HIGHLIGHT)
    c.setAlpha(40)
    return c


def overlay_missing(dark: bool | None = None) -> QColor:
    """A node an overlay has no value for: quiet, so the covered nodes stand out."""
    return _c("#eeeeee", "#2c2e33", dark)


_SCALE_LIGHT = palette.OVERLAY_SCALE_LIGHT
_SCALE_DARK = palette.OVERLAY_SCALE_DARK
_CATEGORIES = palette.OVERLAY_CATEGORIES


def overlay_scale_color(level: float, dark: bool | None = None) -> QColor:
    stops = _SCALE_DARK if (is_dark() if dark is None else dark) else _SCALE_LIGHT
    t = max(0.0, min(1.0, level)) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    a, b = QColor(stops[i]), QColor(stops[i + 1])
    f = t - i
    return QColor(round(a.red() + (b.red() - a.red()) * f), round(a.green() + (b.green() - a.green()) * f),
                  round(a.blue() + (b.blue() - a.blue()) * f))


def overlay_category_color(index: int, dark: bool | None = None) -> QColor:
    c = QColor(_CATEGORIES[index % len(_CATEGORIES)])
    return c.darker(130) if (is_dark() if dark is None else dark) else c.lighter(125)


def overlay_text_color(fill: QColor) -> QColor:
    """Text on an overlay fill: dark on light fills, light on dark ones."""
    return QColor("#1a1a1a") if fill.lightness() > 140 else QColor("#f4f4f4")


# -- the source views' Python colours (app/widgets/python_highlighter.py), by token style: (light, dark) --------------
CODE_STYLES = {
    "keyword": ("#0033b3", "#cf8e6d"),
    "builtin": ("#8a3aa8", "#c77dbb"),
    "name": ("#00627a", "#56a8f5"),  # the name a `def` or `class` defines
    "decorator": ("#9e880d", "#b3ae60"),
    "number": ("#1750eb", "#2aacb8"),
    "string": ("#067d17", "#6aab73"),
    "comment": ("#8c8c8c", "#7a7e85"),
    "torch": ("#871094", "#c77dbb"),  # torch.ops.aten.add.Tensor and the like
}


def code_color(style: str, dark: bool | None = None) -> QColor:
    """The colour of one token style (`CODE_STYLES`) in Python source, for the current (or the given) palette."""
    light, dark_colour = CODE_STYLES[style]
    return _c(light, dark_colour, dark)


def link_color(dark: bool | None = None) -> QColor:
    """Links in panels and details: the palette's default blue is unreadable on a dark background."""
    return _c("#1a5fb4", "#8ab4f8", dark)


def apply_link_colors(app: QGuiApplication) -> None:
    """Make the palette's link colours readable on the current (light or dark) background."""
    refresh()
    pal = app.palette()
    pal.setColor(QPalette.ColorRole.Link, link_color())
    pal.setColor(QPalette.ColorRole.LinkVisited, link_color().darker(115) if not is_dark() else link_color())
    app.setPalette(pal)
