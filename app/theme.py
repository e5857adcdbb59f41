"""Colours for node kinds, following the system's light or dark palette."""
from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

_LIGHT = {
    "user_input": "#cfe8cf", "parameter": "#e6e0f5", "buffer": "#ede3d0", "constant": "#e8e8e8", "token": "#e8e8e8",
    "output": "#cfe1f5", "subgraph": "#f2f2f2", "matmul": "#f6c9a8", "conv": "#f3b6a0", "norm": "#cde7ec",
    "activation": "#f8e3a6", "reduction": "#d9d0ee", "view": "#eeeeee", "elementwise": "#dfeaf6",
    "creation": "#e3f0d8", "hop": "#f7c8dd", "custom": "#ffd37a", "symbolic": "#f0f0e0", "assert": "#f5dede",
    "other": "#e0e0e0",
}
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
