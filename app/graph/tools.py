"""The everyday tools of one document's graph, wired to its DocumentWidget in one place: navigation history (back
and forward through selections and subgraph drills, core/graph/history.py), arrow keys that walk the graph
(core/graph/navigation.py), the right-click menu (app/graph/context_menu.py), overlays with their legend
(core/graph/overlays.py, app/graph/overlay_legend.py), and whether this graph shows the minimap.

Others plug overlays in with `doc.tools.add_overlay(overlay)` (a numerics error overlay, a run's per-node time).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint
from PySide6.QtGui import QActionGroup
from PySide6.QtWidgets import QFileDialog, QMenu, QSplitter, QWidget

from pt2_viewer.app.graph.context_menu import item_menu
from pt2_viewer.app.graph.overlay_legend import OverlayLegend
from pt2_viewer.app.graph.step_bar import StepBar
from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.app.run.panel import CudaProbe
from pt2_viewer.core.graph.details import node_tooltip
from pt2_viewer.core.graph.document import DocumentEvent, Expansion, ExpansionCause
from pt2_viewer.core.graph.history import History, Place, trail_of
from pt2_viewer.core.graph.ids import group_of, node_of
from pt2_viewer.core.graph.navigation import Hits, step
from pt2_viewer.core.graph.overlays import (
    GroupValue,
    Overlay,
    dtype_overlay,
    group_legend,
    group_values,
    json_overlay,
    parameter_bytes_overlay,
    run_time_overlay,
)
from pt2_viewer.core.run.session import CudaStatus

if TYPE_CHECKING:
    from pt2_viewer.app.graph.document import DocumentWidget

BUILT_IN = ("dtype", "Parameter bytes")
RUN_TIME = "Run time"


class GraphTools(QObject):
    def __init__(self, doc: DocumentWidget) -> None:
        super().__init__(doc)
        self.doc = doc
        self.history = History(self.place())
        self._applying = False
        self.menu: QMenu | None = None  # the last context menu (kept while shown, and for tests)
        self.extra: dict[str, Overlay] = {}  # overlays made elsewhere: a run's time, a user's JSON, numerics
        self.overlay_name: str | None = None
        self.legend = OverlayLegend(doc.view)
        self.hits: Hits | None = None  # the nodes being gone through (Find, an op-diff row, Numerics rows)
        self.step_bar = StepBar(doc.view)
        self.step_bar.moved.connect(self.move_hit)
        self.step_bar.closed.connect(lambda: self.go_through([]))
        view = doc.view
        view.step_requested.connect(self.step)
        view.context_requested.connect(self.context_menu)
        view.palette_changed.connect(self._repaint)  # the document draws itself again on the same signal
        view.scene_shown.connect(self._scene_shown)
        self.legend.closed.connect(lambda: self.show_overlay(None))
        doc.run_panel.heat_changed.connect(self._heat)
        doc.numerics_panel.cuda_asked.connect(self._ask_cuda)
        doc.numerics_panel.nodes_requested.connect(lambda nodes, at: self.go_through(nodes, "nodes by error", at))
        doc.run_panel.nodes_requested.connect(lambda nodes, at: self.go_through(nodes, "hottest nodes", at))
        for panel in doc.panel_widgets.values():
            panel.nodes_highlighted.connect(self.go_through_marked)
        view.background_clicked.connect(lambda: self.go_through([]))
        view.describe = self.describe
        CudaProbe.shared().known.connect(self._cuda_known)
        self.group_values: dict[str, GroupValue] = {}  # the shown overlay's aggregate per collapsed group
        end = doc.model.subscribe(self.record)  # the model announces selection, expansion and level changes
        doc.destroyed.connect(lambda _o=None: end())

    # -- history -----------------------------------------------------------------------------------------------
    def place(self) -> Place:
        model = self.doc.model
        return Place(trail_of(model.levels), model.selection, model.expansion())

    def record(self, change: DocumentEvent | None = None) -> None:
        """A move to remember. Groups opened to show a node, and the first view settling, belong to the place they
        serve (amended); Expand all, a depth, a group and Fit's stepping up are places of their own."""
        if not self._applying:
            amend = isinstance(change, Expansion) and change.cause in (ExpansionCause.REVEAL, ExpansionCause.SETTLE)
            self.history.visit(self.place(), amend=amend)

    def back(self) -> bool:
        return self._go(self.history.back())

    def forward(self) -> bool:
        return self._go(self.history.forward())

    def _go(self, place: Place | None) -> bool:
        if place is None:
            return False
        doc, model = self.doc, self.doc.model
        self._applying = True
        try:
            if trail_of(model.levels) != place.trail:
                doc.go_to_level(0)
                for hop, sub in place.trail:
                    doc.enter_subgraph(hop, sub)
            if place.expanded is not None and place.expanded != model.expansion():
                model.set_expansion(place.expanded)  # laid out again, keeping the view; the selection shown after
            node = node_of(place.selection)
            if node is not None and node in model.level.graph.node_by_name:
                doc.reveal(node)
            else:
                doc.select(place.selection)
        finally:
            self._applying = False
        return True

    # -- keys and menus ----------------------------------------------------------------------------------------
    def step(self, direction: str) -> None:
        node = node_of(self.doc.model.selection)
        if node is None:
            return
        level = self.doc.model.level
        target = step(level.index, node, direction, level.scene.folding.host)  # weight rows: by click and Find
        if target is not None:
            self.doc.reveal(target)

    # -- going through several nodes ----------------------------------------------------------------------------
    def go_through(self, nodes: list[str], label: str = "", at: int = 0) -> None:
        """Reveal `nodes[at]` (expanding its groups) and zoom to it, with previous/next (the step bar, F3 and
        Shift+F3) to the others; `at` -1 reveals none yet (marked nodes). [] puts the bar away, and with it the
        marks it was going through (they never stay stuck on the graph)."""
        if self.hits is not None and self.hits.marks:
            self.doc.mark([])
        graph = self.doc.model.level.graph.node_by_name
        nodes = [n for n in nodes if n in graph]
        self.hits = Hits(nodes, label, min(max(at, -1), len(nodes) - 1)) if nodes else None
        self.step_bar.show_hits(self.hits)
        if self.hits is not None and self.hits.current is not None:
            self.doc.reveal(self.hits.current)

    def go_through_marked(self, nodes: list[str], label: str = "marked") -> None:
        """Nodes a panel marked (an op in Summary, a symbol, a node's users): the bar steps through them, and
        closing it, or a click on the background, takes the marks away."""
        self.go_through(nodes, label, at=-1)  # unmarks the nodes an earlier bar went through
        self.doc.mark(nodes)
        if self.hits is not None:
            self.hits.marks = True

    def move_hit(self, by: int) -> bool:
        """The next (+1) or previous (-1) of the nodes gone through (F3, Shift+F3, the step bar, Enter in Find); Find's
        first match right after typing; False when there are none."""
        if self.doc.finder.step(by):
            return True
        if self.hits is None:
            return False
        node = self.hits.move(by)
        self.step_bar.show_hits(self.hits)
        self.doc.finder.moved()  # Find's list shows the match the bar shows
        if node is not None:
            self.doc.reveal(node)
        return node is not None

    def describe(self, node: str) -> str:
        """A node's tooltip: target, module path, output types and users (core/graph/details.node_tooltip)."""
        level = self.doc.model.level
        return node_tooltip(self.doc.model.program, level.graph, node, level.index, self.doc.symbols_panel.dim_names)

    def context_menu(self, item: str, pos: QPoint) -> None:
        if item and node_of(item) is not None:
            self.doc.select(item)
        self.menu = item_menu(self.doc, item)
        self.menu.popup(pos)

    def show_in_code(self, node: str) -> None:
        doc = self.doc
        doc.reveal(node)
        doc.panels.setVisible(True)
        doc.panels.setCurrentWidget(doc.panel_widgets["Code"])

    def find_users(self, node: str) -> None:
        users = self.doc.model.level.index.users.get(node, [])
        self.doc.mark(users)
        self.go_through_marked(users, f"users of {node}")
        self.doc.status.emit(f"{len(users)} users of {node} highlighted")

    # -- overlays ----------------------------------------------------------------------------------------------
    def overlay_names(self) -> list[str]:
        return [*BUILT_IN, *self.extra]

    def add_overlay(self, overlay: Overlay, show: bool = True) -> None:
        """Offer an overlay (by its name, replacing one of that name) and, with `show`, paint it now. Its figures
        for the selected node are listed in Details too, under its name (a numerics error, a run's time)."""
        self.extra[overlay.name] = overlay
        self._details().set_measure(overlay.name, overlay)
        if show or self.overlay_name == overlay.name:
            self.show_overlay(overlay.name)

    def remove_overlay(self, name: str) -> None:
        self.extra.pop(name, None)
        self._details().set_measure(name, None)
        if self.overlay_name == name:
            self.show_overlay(None)

    def _details(self) -> DetailsPanel:
        panel = self.doc.panel_widgets["Details"]
        assert isinstance(panel, DetailsPanel)
        return panel

    def load_overlay(self, path: str) -> Overlay:
        """A user's `{node_name: value}` JSON; raises OverlayFileError with a one-line reason."""
        overlay = json_overlay(path, self.doc.model.level.graph)
        self.add_overlay(overlay)
        return overlay

    def build(self, name: str) -> Overlay | None:
        level = self.doc.model.level
        if name == "dtype":
            return dtype_overlay(level.graph)
        if name == "Parameter bytes":
            return parameter_bytes_overlay(self.doc.model.program, level.graph)
        return self.extra.get(name)

    def show_overlay(self, name: str | None) -> None:
        overlay = self.build(name) if name else None
        self.overlay_name = name if overlay is not None else None
        self.doc.view.set_overlay(overlay)
        self._paint_groups()
        if not self.doc.minimap.pixmap.isNull():
            self.doc.minimap.refit()  # the small picture shows the overlay's colours too

    def _paint_groups(self) -> None:
        """The shown overlay's aggregate over each collapsed group on screen (sum of bytes or time, max of an
        error), painted on the group and told in the legend."""
        overlay = self.doc.view.overlay
        self.group_values = {}
        if overlay is not None and overlay.aggregate:
            scene = self.doc.model.level.scene
            members: dict[str, list[str]] = {}
            for node in overlay.values:
                path = group_of(scene.visible_item(node))
                if path is not None:
                    members.setdefault(path, []).append(node)
            self.group_values = group_values(overlay, members)
        self.doc.view.set_group_values(self.group_values)
        self.legend.set_overlay(overlay, group_legend(overlay, self.group_values) if overlay is not None else "")

    def _heat(self, seconds: dict[str, float]) -> None:
        """A run's per-node time (seconds), or {} when the run had none."""
        if seconds:
            self.add_overlay(run_time_overlay(seconds))
        else:
            self.remove_overlay(RUN_TIME)

    # -- CUDA for the Numerics tab, as Run asks it -------------------------------------------------------------
    def _ask_cuda(self) -> None:
        status = CudaProbe.shared().ask()
        if status is not None:
            self._cuda_known(status)

    def _cuda_known(self, status: CudaStatus) -> None:
        self.doc.numerics_panel.set_cuda(status.available, status.reason)

    # -- redraws -----------------------------------------------------------------------------------------------
    def _scene_shown(self) -> None:
        if self.overlay_name in BUILT_IN:  # another level: its own dtypes and sizes
            self.show_overlay(self.overlay_name)
        elif self.overlay_name is not None:  # other groups collapsed: their aggregates again
            self._paint_groups()
        minimap = self.doc.minimap
        minimap.beside_another, minimap.in_comparison = _beside_other_graphs(self.doc)

    def _repaint(self) -> None:
        """The palette changed (light/dark): the legend and the minimap take the theme's colours again."""
        self.legend.update()
        self.doc.minimap.refit()


def _beside_other_graphs(doc: QWidget) -> tuple[bool, bool]:
    """Whether another document sits before this one in a splitter, and whether any sits beside it (a comparison):
    a comparison's panes show a minimap only when asked, and then only the first, since the two views move
    together."""
    before = beside = False
    child, parent = doc, doc.parentWidget()
    while parent is not None:
        if isinstance(parent, QSplitter):
            i = parent.indexOf(child)
            for k in range(parent.count()):
                w = parent.widget(k)
                if k != i and w is not None and (type(w) is type(doc) or w.findChild(type(doc)) is not None):
                    beside = True
                    before = before or k < i
        child, parent = parent, parent.parentWidget()
    return before, beside


def fill_overlay_menu(menu: QMenu, doc: DocumentWidget | None, parent: QWidget) -> None:
    """View > Overlay for the graph the View menu acts on: None, each overlay it offers, and loading a user's
    `{node_name: value}` JSON file."""
    menu.clear()
    if doc is None:
        menu.addAction("No graph").setEnabled(False)
        return
    tools = doc.tools
    group = QActionGroup(menu)
    for name in [None, *tools.overlay_names()]:
        action = menu.addAction(name or "None (kind colours)", functools.partial(tools.show_overlay, name))
        action.setCheckable(True)
        action.setChecked(tools.overlay_name == name)
        group.addAction(action)
    menu.addSeparator()

    def load() -> None:
        path, _ = QFileDialog.getOpenFileName(parent, "Load a per-node overlay", "", "JSON {node: value} (*.json)")
        if path:
            try:
                overlay = tools.load_overlay(path)
            except ValueError as e:
                doc.status.emit(str(e))
                return
            doc.status.emit(f"Overlay {overlay.name}: {len(overlay.texts)} nodes"
                            + (f" ({'; '.join(overlay.notes)})" if overlay.notes else ""))

    menu.addAction("Load Per-Node Values (JSON)…", load)
