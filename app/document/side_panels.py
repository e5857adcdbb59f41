"""A document's side panels: Details built with the document (the first view shows it), Signature, Symbols, Code and
Summary when first shown or asked for (app/document/lazy_tabs.py), a kind of file's own panels (a `.pte`'s) with the
document. The four lazy ones cost a first view about 0.01 s of imports and widgets for tabs a user may never open."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTabWidget, QWidget

from pt2_viewer.app.document.lazy_tabs import LazyTabs
from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.app.panels.panel import Panel

if TYPE_CHECKING:
    from pt2_viewer.app.panels.symbols import SymbolsPanel


def _signature() -> Panel:
    from pt2_viewer.app.panels.signature import SignaturePanel

    return SignaturePanel()


def _symbols() -> Panel:
    from pt2_viewer.app.panels.symbols import SymbolsPanel

    return SymbolsPanel()


def _code() -> Panel:
    from pt2_viewer.app.panels.code import CodePanel

    return CodePanel()


def _summary() -> Panel:
    from pt2_viewer.app.panels.summary import SummaryPanel

    return SummaryPanel()


LAZY: tuple[tuple[str, Callable[[], Panel]], ...] = (
    ("Signature", _signature), ("Symbols", _symbols), ("Code", _code), ("Summary", _summary))


class SidePanels(Mapping[str, Panel]):
    """Title -> panel, in tab order. Looking a panel up builds it if it was not yet; `built` holds those built so far
    (what a selection or a level change must reach: one built later is filled when it is shown). `on_built(title,
    panel)` is called once for each, eager or lazy, as it is built."""

    def __init__(self, tabs: QTabWidget, extra: Mapping[str, Panel],
                 on_built: Callable[[str, Panel], object]) -> None:
        self._on_built = on_built
        self.built: dict[str, Panel] = {}
        self._titles = ["Details", *(title for title, _ in LAZY), *extra]
        self._lazy = LazyTabs(tabs, self._was_built)
        self._add(tabs, "Details", DetailsPanel())
        for title, factory in LAZY:
            self._lazy.add(title, factory)
        for title, panel in extra.items():
            self._add(tabs, title, panel)

    def _add(self, tabs: QTabWidget, title: str, panel: Panel) -> None:
        tabs.addTab(panel, title)
        self._was_built(title, panel)

    def _was_built(self, title: str, panel: QWidget) -> None:
        assert isinstance(panel, Panel)
        self.built[title] = panel
        self._on_built(title, panel)

    def __getitem__(self, title: str) -> Panel:
        panel = self.built.get(title)
        if panel is not None:
            return panel
        if title not in self._titles:
            raise KeyError(title)
        built = self._lazy.get(title)
        assert isinstance(built, Panel)
        return built

    def __iter__(self) -> Iterator[str]:
        return iter(self._titles)

    def __len__(self) -> int:
        return len(self._titles)

    @property
    def details(self) -> DetailsPanel:
        panel = self.built["Details"]
        assert isinstance(panel, DetailsPanel)
        return panel

    @property
    def symbols(self) -> SymbolsPanel:
        """The Symbols panel, built now if its tab was never shown."""
        from pt2_viewer.app.panels.symbols import SymbolsPanel  # deferred: built when first shown

        panel = self["Symbols"]
        assert isinstance(panel, SymbolsPanel)
        return panel
