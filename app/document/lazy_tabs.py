"""Tabs whose page is built the first time it is shown or asked for.

The Run and Numerics tabs of a document import the job driver, the worker client and their schemas (about a tenth of
a second) and build forms nobody looks at before the graph: the first view of a program should not wait for them. A
lazy tab starts as an empty placeholder page under its title; when the user clicks it, or code asks for its panel
(`get`), the factory builds the real panel, which takes the placeholder's place (same title, same position, current
if the placeholder was).
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget, QWidget


class LazyTabs(QObject):
    """Lazy pages of one `QTabWidget`. A page clicked is built before the tab widget's later `currentChanged`
    handlers run (this one is connected first), so they see the panel, never its placeholder."""

    def __init__(self, tabs: QTabWidget, on_build: Callable[[str, QWidget], object] | None = None) -> None:
        super().__init__(tabs)
        self.tabs = tabs
        self._on_build = on_build  # told of each page built, once it is in its tab's place
        self.panels: dict[str, QWidget] = {}  # the pages built so far, by title
        self._waiting: dict[str, tuple[QWidget, Callable[[], QWidget]]] = {}  # title: (placeholder, factory)
        tabs.currentChanged.connect(self._current_changed)

    def add(self, title: str, factory: Callable[[], QWidget]) -> None:
        placeholder = QWidget()
        self._waiting[title] = (placeholder, factory)
        self.tabs.addTab(placeholder, title)

    def get(self, title: str) -> QWidget:
        """The tab's panel, built now if it was not yet."""
        panel = self.panels.get(title)
        return panel if panel is not None else self._build(title)

    def is_panel(self, widget: QWidget | None) -> bool:
        """Whether `widget` is one of these tabs' pages, built (a placeholder never is)."""
        return any(widget is p for p in self.panels.values())

    def _current_changed(self, index: int) -> None:
        page = self.tabs.widget(index)
        for title, (placeholder, _factory) in list(self._waiting.items()):
            if page is placeholder:
                self._build(title)

    def _build(self, title: str) -> QWidget:
        placeholder, factory = self._waiting.pop(title)
        panel = self.panels[title] = factory()  # known before it is shown: its showEvent may ask for it
        blocked = self.tabs.blockSignals(True)  # the tabs passed over while swapping are not shown to anyone
        try:
            index = self.tabs.indexOf(placeholder)
            was_current = self.tabs.currentIndex() == index
            self.tabs.insertTab(index, panel, title)
            self.tabs.removeTab(index + 1)
            if was_current:
                self.tabs.setCurrentIndex(index)
        finally:
            self.tabs.blockSignals(blocked)
        placeholder.deleteLater()
        if self._on_build is not None:
            self._on_build(title, panel)
        return panel
