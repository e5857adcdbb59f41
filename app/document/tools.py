"""The everyday tools of one document's graph, given only the document's model, its view and how to show a node
(`reveal`, and `select` for a place that is a group or nothing): navigation history (back and forward through
selections and subgraph drills, core/graph/history.py), arrow keys that walk the graph (core/graph/navigation.py),
going through several nodes with the step bar, and overlays with their legend (core/graph/overlays.py,
app/graph/overlay_legend.py).

What the tools tell the document they emit: `status` (a line for the status bar), `measure_changed` (an overlay's
figures for Details), `overlay_shown` (the minimap repaints), `hit_moved` (Find's list follows). Find goes first on a
move through matches (`before_move`). The right-click menu, the panels' wiring and the minimap are the document's.

Others plug overlays in with `doc.tools.add_overlay(overlay)` (a numerics error overlay, a run's per-node time).
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from pt2_viewer.app.graph.overlay_legend import OverlayLegend
from pt2_viewer.app.graph.step_bar import StepBar
from pt2_viewer.app.graph.view import GraphView
from pt2_viewer.core.graph.document import DocumentEvent, DocumentModel, Expansion, ExpansionCause
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

BUILT_IN = ("dtype", "Parameter bytes")
RUN_TIME = "Run time"


class GraphTools(QObject):
    status = Signal(str)
    measure_changed = Signal(str, object)  # an overlay's name, and the overlay (None: gone), for Details
    overlay_shown = Signal()
    hit_moved = Signal()

    def __init__(self, model: DocumentModel, view: GraphView, reveal: Callable[[str], None],
                 select: Callable[[str | None], None]) -> None:
        super().__init__(view)
        self.model, self.view, self.reveal, self.select = model, view, reveal, select
        self.before_move: Callable[[int], bool] = lambda _by: False  # Find's turn first (app/graph/find_bar.py)
        self.history = History(self.place())
        self._applying = False
        self.extra: dict[str, Overlay] = {}  # overlays made elsewhere: a run's time, a user's JSON, numerics
        self.overlay_name: str | None = None
        self.legend = OverlayLegend(view)
        self.hits: Hits | None = None  # the nodes being gone through (Find, an op-diff row, Numerics rows)
        self.step_bar = StepBar(view)
        self.step_bar.moved.connect(self.move_hit)
        self.step_bar.closed.connect(self.put_away)
        view.step_requested.connect(self.step)
        view.palette_changed.connect(self.legend.update)  # the legend takes the theme's colours again
        view.scene_shown.connect(self._scene_shown)
        self.legend.closed.connect(lambda: self.show_overlay(None))
        view.background_clicked.connect(self.put_away)
        self.group_values: dict[str, GroupValue] = {}  # the shown overlay's aggregate per collapsed group
        end = model.subscribe(self.record)  # the model announces selection, expansion and level changes
        self.destroyed.connect(lambda _o=None: end())

    # -- history -----------------------------------------------------------------------------------------------
    def place(self) -> Place:
        model = self.model
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
        model = self.model
        self._applying = True
        try:
            if trail_of(model.levels) != place.trail:
                model.go_to_level(0)
                for hop, sub in place.trail:
                    model.enter_subgraph(hop, sub)
            if place.expanded is not None and place.expanded != model.expansion():
                model.set_expansion(place.expanded)  # laid out again, keeping the view; the selection shown after
            node = node_of(place.selection)
            if node is not None and node in model.level.graph.node_by_name:
                self.reveal(node)
            else:
                self.select(place.selection)
        finally:
            self._applying = False
        return True

    # -- keys and menus ----------------------------------------------------------------------------------------
    def step(self, direction: str) -> None:
        node = node_of(self.model.selection)
        if node is None:
            return
        level = self.model.level
        target = step(level.index, node, direction, level.scene.folding.host)  # weight rows: by click and Find
        if target is not None:
            self.reveal(target)

    # -- going through several nodes ----------------------------------------------------------------------------
    def go_through(self, nodes: list[str], label: str = "", at: int = 0) -> None:
        """Reveal `nodes[at]` (expanding its groups) and zoom to it, with previous/next (the step bar, F3 and
        Shift+F3) to the others; `at` -1 reveals none yet (marked nodes). [] puts the bar away, and with it the
        marks it was going through (they never stay stuck on the graph)."""
        if self.hits is not None and self.hits.marks:
            self.model.marked = []
        graph = self.model.level.graph.node_by_name
        nodes = [n for n in nodes if n in graph]
        self.hits = Hits(nodes, label, min(max(at, -1), len(nodes) - 1)) if nodes else None
        self.step_bar.show_hits(self.hits)
        if self.hits is not None and self.hits.current is not None:
            self.reveal(self.hits.current)

    def put_away(self) -> None:
        """The bar's × or a click on the background: the bar goes, and with it every mark on the graph and the
        minimap, Find's matches too (they stayed red after ×, though the README says × takes them away)."""
        self.go_through([])
        self.model.matches = []
        self.model.marked = []

    def go_through_marked(self, nodes: list[str], label: str = "marked") -> None:
        """Nodes a panel marked (an op in Summary, a symbol, a node's users): the bar steps through them, and
        closing it, or a click on the background, takes the marks away."""
        self.go_through(nodes, label, at=-1)  # unmarks the nodes an earlier bar went through
        self.model.marked = nodes
        if self.hits is not None:
            self.hits.marks = True

    def move_hit(self, by: int) -> bool:
        """The next (+1) or previous (-1) of the nodes gone through (F3, Shift+F3, the step bar, Enter in Find); Find's
        first match right after typing; False when there are none."""
        if self.before_move(by):
            return True
        if self.hits is None:
            return False
        node = self.hits.move(by)
        self.step_bar.show_hits(self.hits)
        self.hit_moved.emit()  # Find's list shows the match the bar shows
        if node is not None:
            self.reveal(node)
        return node is not None

    def find_users(self, node: str) -> None:
        users = list(self.model.level.index.users.get(node, ()))
        self.go_through_marked(users, f"users of {node}")  # marks them
        self.status.emit(f"{len(users)} users of {node} highlighted")

    # -- overlays ----------------------------------------------------------------------------------------------
    def overlay_names(self) -> list[str]:
        return [*BUILT_IN, *self.extra]

    def add_overlay(self, overlay: Overlay, show: bool = True) -> None:
        """Offer an overlay (by its name, replacing one of that name) and, with `show`, paint it now. Its figures
        for the selected node are listed in Details too, under its name (a numerics error, a run's time)."""
        self.extra[overlay.name] = overlay
        self.measure_changed.emit(overlay.name, overlay)
        if show or self.overlay_name == overlay.name:
            self.show_overlay(overlay.name)

    def remove_overlay(self, name: str) -> None:
        self.extra.pop(name, None)
        self.measure_changed.emit(name, None)
        if self.overlay_name == name:
            self.show_overlay(None)

    def load_overlay(self, path: str) -> Overlay:
        """A user's `{node_name: value}` JSON; raises OverlayFileError with a one-line reason."""
        overlay = json_overlay(path, self.model.level.graph)
        self.add_overlay(overlay)
        return overlay

    def build(self, name: str) -> Overlay | None:
        level = self.model.level
        if name == "dtype":
            return dtype_overlay(level.graph)
        if name == "Parameter bytes":
            return parameter_bytes_overlay(self.model.program, level.graph)
        return self.extra.get(name)

    def show_overlay(self, name: str | None) -> None:
        overlay = self.build(name) if name else None
        self.overlay_name = name if overlay is not None else None
        self.view.set_overlay(overlay)
        self._paint_groups()
        self.overlay_shown.emit()  # the minimap shows the overlay's colours too

    def _paint_groups(self) -> None:
        """The shown overlay's aggregate over each collapsed group on screen (sum of bytes or time, max of an
        error), painted on the group and told in the legend."""
        overlay = self.view.overlay
        self.group_values = {}
        if overlay is not None and overlay.aggregate:
            scene = self.model.level.scene
            members: dict[str, list[str]] = {}
            for node in overlay.values:
                path = group_of(scene.visible_item(node))
                if path is not None:
                    members.setdefault(path, []).append(node)
            self.group_values = group_values(overlay, members)
        self.view.set_group_values(self.group_values)
        self.legend.set_overlay(overlay, group_legend(overlay, self.group_values) if overlay is not None else "")

    def show_run_time(self, seconds: dict[str, float]) -> None:
        """A run's per-node time (seconds), or {} when the run had none."""
        if seconds:
            self.add_overlay(run_time_overlay(seconds))
        else:
            self.remove_overlay(RUN_TIME)

    # -- redraws -----------------------------------------------------------------------------------------------
    def _scene_shown(self) -> None:
        if self.overlay_name in BUILT_IN:  # another level: its own dtypes and sizes
            self.show_overlay(self.overlay_name)
        elif self.overlay_name is not None:  # other groups collapsed: their aggregates again
            self._paint_groups()
