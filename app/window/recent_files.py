"""File > Open Recent and the start page's list: the last files the user opened, newest first, kept in QSettings.
Programs the app itself wrote (a script's export, opened from a temporary copy) are never listed: they go with
their tab."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMenu

from pt2_viewer.core.platform import temp_dirs

MAX_RECENT = 10


class RecentFiles:
    """The list in `settings`, shown in `menu` and handed to `show` (the start page) whenever it changes; choosing
    an entry calls `open_path`."""

    def __init__(self, settings: QSettings, menu: QMenu, open_path: Callable[[str], object],
                 show: Callable[[list[str]], object], remember: bool = True) -> None:
        self.settings = settings
        self.menu = menu
        self.open_path = open_path
        self.show = show
        self.remember_files = remember  # False for --screenshot: a script's files never crowd Open Recent
        self.fill()

    def paths(self) -> list[str]:
        value = self.settings.value("recent", [])
        items = [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]
        return [p for p in items if not temp_dirs.is_temporary(p)]

    def remember(self, path: str) -> None:
        if temp_dirs.is_temporary(path) or not self.remember_files:  # a program the app wrote is gone with its tab
            return
        items = [path] + [p for p in self.paths() if p != path]
        self.settings.setValue("recent", items[:MAX_RECENT])
        self.fill()

    def fill(self) -> None:
        self.menu.clear()
        paths = self.paths()
        for path in paths:
            action = self.menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))
        self.menu.setEnabled(bool(paths))
        self.show(paths)
