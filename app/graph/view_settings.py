"""The View menu's remembered choices that decide how a graph is drawn, read where the drawing is prepared: the
window's thread, and the thread that builds a program's first view (app/graph/loader.py)."""
from __future__ import annotations

from pt2_viewer.app.settings import app_settings

WEIGHTS_SETTING = "view/weights_as_nodes"  # View > Show Weights as Nodes, remembered


def bool_setting(key: str, default: bool) -> bool:
    value = app_settings().value(key, default)
    return value if isinstance(value, bool) else str(value).lower() in ("true", "1")


def weights_as_nodes_wanted() -> bool:
    """The remembered View > Show Weights as Nodes choice (off: weights are rows of the ops that use them)."""
    return bool_setting(WEIGHTS_SETTING, False)
