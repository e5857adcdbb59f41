"""Where the window keeps what the user chose (QSettings): one organisation and application name for every saved
choice, so a setting written by one view is read by another (the worker, the minimap, splitter sizes, ...)."""
from __future__ import annotations

from PySide6.QtCore import QSettings

ORGANIZATION, APPLICATION = "pt2-viewer", "PT2 Viewer"


def app_settings() -> QSettings:
    """The app's settings store (the user's config folder; tests point it elsewhere)."""
    return QSettings(ORGANIZATION, APPLICATION)


__all__ = ["APPLICATION", "ORGANIZATION", "app_settings"]
