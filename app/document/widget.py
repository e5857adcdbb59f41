"""One open program: the graph with its toolbar, breadcrumb and minimap, and the panels beside it.

The widget mirrors a `DocumentModel` (core/graph/document.py): user intent goes to the model, the model says what to
draw. Layouts are requested level by level (children before the groups that contain them) from the layout child
process; a layout that takes over half a second shows progress with Cancel.

Anything that goes wrong on the way to the picture (building requests, the layout child, composing, drawing) ends in
a one-line message shown in the document itself and sent as `layout_failed`, never in a window that waits forever.
"""
from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.document.find_bar import FindBar
from pt2_viewer.app.document.job_tabs import JobTabs
from pt2_viewer.app.document.side_panels import SidePanels
from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.tools import GraphTools
from pt2_viewer.app.graph.breadcrumb import Breadcrumb
from pt2_viewer.app.graph.context_menu import MenuActions, item_menu
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.minimap import MiniMap
from pt2_viewer.app.graph.view import GraphView
from pt2_viewer.app.graph.view_settings import WEIGHTS_SETTING, weights_as_nodes_wanted
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.app.qt import later, tool_button
from pt2_viewer.app.settings import app_settings
from pt2_viewer.app.widgets.common import splitter
from pt2_viewer.core.graph.details import node_tooltip
from pt2_viewer.core.graph.document import DocumentChange, DocumentEvent, DocumentModel, Expansion, ExpansionCause
from pt2_viewer.core.graph.framing import Settle, below, below_text
from pt2_viewer.core.graph.ids import node_of
from pt2_viewer.core.graph.overlays import Overlay
from pt2_viewer.core.graph.summary import open_groups_text
from pt2_viewer.core.layout.driver import LayoutRounds
from pt2_viewer.core.layout.records import LayoutError, LayoutRequest
from pt2_viewer.core.util.words import plural

if TYPE_CHECKING:  # built when their tab is first shown (app/document/job_tabs.py, side_panels.py)
    from pt2_viewer.app.numerics.panel import NumericsPanel
    from pt2_viewer.app.panels.symbols import SymbolsPanel
    from pt2_viewer.app.run.panel import RunPanel

PROGRESS_AFTER_MS = 500


class DocumentWidget(DocumentTab):
    """Shows one program of one archive. Emits `graph_ready` each time a layout is on screen, `layout_failed(message)`
    when it cannot draw the graph (the message is also in `failure` and on the notice above the graph)."""

    graph_ready = Signal()
    layout_failed = Signal(str)
    compare_requested = Signal(object, str)  # the Numerics tab's Compare at first divergence (NumericsPanel's)
    # The Find box and the depth spin box. Their names are QWidget's find (a static lookup by window id) and depth (the
    # paint device's colour depth), which nothing here calls; renaming them would change every caller.
    find: QLineEdit  # type: ignore[assignment]
    depth: QSpinBox  # type: ignore[assignment]

    def __init__(self, model: DocumentModel, layouts: LayoutClient, *, interactive: bool = True,
                 extra_panels: dict[str, Panel] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.interactive = interactive  # False for --screenshot and tests: no modal dialogs
        self.layouts = layouts
        # Layout rounds through the layout child; each next round in a later turn of the event loop.
        self.rounds = LayoutRounds(layouts.submit, layouts.cancel, lambda step: later(self, step))
        self._started = 0.0
        self._expanded = (0, 0.0)  # groups an Expand all (or a depth) opened, and when: the status line says so
        self._keep_view = False
        self.ready = False
        self.failure: str | None = None

        self.view = GraphView()
        self.minimap = MiniMap(self.view, self.view)
        self.breadcrumb = Breadcrumb()
        # history, arrow keys, going through nodes, overlays (run time, dtype ...): given the model, the view and how
        # to show a node, no more
        self.tools = GraphTools(model, self.view, self.reveal, self.select)
        self.finder = FindBar(model, self.tools, self.status.emit, self)
        self.find = self.finder.box
        self.results = self.finder.results
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.cancel_button = QPushButton("Cancel")
        self.progress_label = QLabel("Laying out…")
        self.depth = QSpinBox(minimum=0, maximum=32, prefix="depth ")
        self.depth.setToolTip("Expand module groups to this depth")
        self.notice = QLabel()  # a layout failure, or what a damaged archive made us leave out
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.setVisible(False)

        bar = QHBoxLayout()
        bar.addWidget(self.breadcrumb, 1)
        for text, tip, slot in (("Expand all", "Expand every module group", self.expand_all),
                                ("Collapse all", "Collapse to the top-level modules", self.collapse_all),
                                ("Fit", "Fit what is expanded in the window, labels readable: past that, from "
                                 "where the program starts (Ctrl+0)", self.fit)):
            b = tool_button(text, tip)
            b.clicked.connect(slot)
            bar.addWidget(b)
        bar.addWidget(self.depth)
        bar.addWidget(self.find, 1)

        busy = QHBoxLayout()
        busy.addWidget(self.progress_label)
        busy.addWidget(self.progress, 1)
        busy.addWidget(self.cancel_button)
        self.busy_row = QWidget()
        self.busy_row.setLayout(busy)
        self.busy_row.setVisible(False)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(bar)
        lv.addWidget(self.busy_row)
        lv.addWidget(self.notice)
        lv.addWidget(self.view, 1)
        lv.addWidget(self.results)

        self.panels = QTabWidget()
        self._stale_panels: set[str] = set()
        # Details now, the other side panels when first shown (app/document/side_panels.py), and what a kind of file
        # adds (an ExecuTorch .pte's panel)
        self.panel_widgets = SidePanels(self.panels, extra_panels or {}, self._panel_built)
        self.job_tabs = JobTabs(self.panels, model.archive.path, model.program, interactive, self.tools,
                                self.reveal, self.compare_requested.emit)  # Run and Numerics, built when first shown
        # wide enough for every tab's title whole (a script's tab is narrow: "De…, Sig…, Sy…" said nothing)
        tab_bar = self.panels.tabBar()
        self.panels.setMinimumWidth(sum(tab_bar.tabSizeHint(i).width() for i in range(tab_bar.count())) + 8)

        split = splitter(Qt.Orientation.Horizontal, left, self.panels, sizes=(860, 540), stretch=(3, 1),
                         remember="document")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(split)

        self._progress_timer = QTimer(self, singleShot=True, interval=PROGRESS_AFTER_MS)
        self._progress_timer.timeout.connect(lambda: self.busy_row.setVisible(self.laying_out))

        self.view.node_clicked.connect(self.select)
        self.view.hub_clicked.connect(self.select)
        self.view.group_toggled.connect(self.toggle_group)
        self.view.palette_changed.connect(self.redraw)
        self.view.node_double_clicked.connect(self.open_subgraph_of)
        self.view.background_clicked.connect(lambda: self.select(None))
        self.breadcrumb.level_clicked.connect(self.go_to_level)
        self.cancel_button.clicked.connect(self.cancel_layout)
        self.depth.valueChanged.connect(self.expand_to_depth)
        self._wire_tools()
        self.subgraph_menu: QMenu | None = None
        self.menu: QMenu | None = None  # the last right-click menu (kept while shown, and for tests)
        self.panels.currentChanged.connect(lambda _i: self._refresh_current_panel())
        model.set_weights_as_nodes(weights_as_nodes_wanted())  # before the first layout: nothing is redone
        self._unsubscribe = model.subscribe(self._model_changed)
        self.destroyed.connect(lambda _o=None, end=self._unsubscribe: end())
        # In the next turn of the event loop, once whoever made this widget has connected to its signals: a level
        # that needs no Graphviz is drawn at once, and its graph_ready (or layout_failed) must reach them. A maker
        # that has connected calls `start` itself and saves that turn (and the paint of an empty graph in it).
        self._level_shown = False
        later(self, self.start)

    def start(self) -> None:
        """Show the first level (its layouts taken from the cache already are drawn now), unless shown already."""
        if not self._level_shown:
            self._show_level()

    def _wire_tools(self) -> None:
        """What the graph's tools do with the panels, the minimap and the status line, and the panels with them."""
        tools, view = self.tools, self.view
        tools.status.connect(self.status.emit)
        tools.measure_changed.connect(self._set_measure)
        tools.overlay_shown.connect(self._overlay_shown)
        view.palette_changed.connect(self.minimap.refit)  # the minimap takes the theme's colours again
        view.scene_shown.connect(self._place_minimap)
        view.context_requested.connect(self._context_menu)
        view.describe = self.describe

    def _panel_built(self, title: str, panel: Panel) -> None:
        """A side panel built (Details with the document, the others when first shown): wired to the document, and
        filled when it is shown."""
        panel.node_requested.connect(self.reveal)
        panel.nodes_highlighted.connect(self.mark)
        panel.nodes_highlighted.connect(self.tools.go_through_marked)
        panel.subgraph_requested.connect(self.enter_subgraph)
        panel.source_requested.connect(self._open_source)
        self._stale_panels.add(title)

    @property
    def symbols_panel(self) -> SymbolsPanel:
        return self.panel_widgets.symbols  # built now if its tab was never shown

    def _set_measure(self, name: str, overlay: object) -> None:
        assert overlay is None or isinstance(overlay, Overlay)
        self.panel_widgets.details.set_measure(name, overlay)  # its figures for the selected node, under its name

    def _overlay_shown(self) -> None:
        if not self.minimap.pixmap.isNull():
            self.minimap.refit()  # the small picture shows the overlay's colours too

    def describe(self, node: str) -> str:
        """A node's tooltip: target, module path, output types and users (core/graph/details.node_tooltip)."""
        level = self.model.level
        return node_tooltip(self.model.program, level.graph, node, level.index, self.panel_widgets.details.dim_names)

    def item_menu(self, item: str) -> QMenu:
        """The right-click menu for a node, a group or the background ("") (app/graph/context_menu.py)."""
        return item_menu(self.model, item, MenuActions(self.fit, self.show_in_code, self.tools.find_users,
                                                       self.open_subgraph_of), self)

    def _context_menu(self, item: str, pos: QPoint) -> None:
        if item and node_of(item) is not None:
            self.select(item)
        self.menu = self.item_menu(item)
        self.menu.popup(pos)

    def show_in_code(self, node: str) -> None:
        self.reveal(node)
        self.panels.setVisible(True)
        self.panels.setCurrentWidget(self.panel_widgets["Code"])

    @property
    def run_panel(self) -> RunPanel:
        """The Run tab's panel, built now if its tab was never shown."""
        return self.job_tabs.run_panel

    @property
    def numerics_panel(self) -> NumericsPanel:
        """The Numerics tab's panel, built now if its tab was never shown."""
        return self.job_tabs.numerics_panel

    def _open_source(self, file: str, line: int) -> None:
        from pt2_viewer.app.widgets.source_view import open_source  # pygments: only once source is shown
        open_source(file, line, self)

    def _place_minimap(self) -> None:
        self.minimap.beside_another, self.minimap.in_comparison = _beside_other_graphs(self)

    # -- levels and layout -------------------------------------------------------------------------------------
    def _show_level(self) -> None:
        self._level_shown = True
        self.breadcrumb.set_levels([lv.title for lv in self.model.levels])
        self._stale_panels = set(self.panel_widgets)
        self._refresh_current_panel()
        self._keep_view = False
        self.relayout()  # the level's framing steps up while the first view does not fit (_draw)

    def relayout(self) -> None:
        """Send whatever layouts the current expansion still needs (superseding any under way); draw when none is
        missing."""
        self.model.level.scene.lay_out_first(self.view.groups_in_view())  # the groups on screen go first
        self.rounds.run(self.model.level.scene, on_ready=self._draw, on_failed=self._layout_failed,
                        on_round=self._laying_out)

    def _laying_out(self, pending: dict[str, LayoutRequest]) -> None:
        if not self._started:
            self._started = time.perf_counter()
            self._progress_timer.start()
            self.status.emit(f"Laying out {sum(len(r.nodes) for r in pending.values())} items…")

    def _layout_failed(self, error: BaseException) -> None:
        if isinstance(error, LayoutError):
            self._fail(f"Could not lay out the graph: {error}. Collapse some groups and try again.")
        else:  # a bug, or an archive nobody foresaw: say so rather than wait forever
            self._fail(_internal(error))

    @property
    def keeps_view(self) -> bool:
        """Whether the drawing being shown keeps the view (a group toggled, a node revealed) or starts afresh (Expand
        all, a depth): a comparison's pane drawn afresh goes back to its selection (app/compare/view.py)."""
        return self._keep_view

    @property
    def laying_out(self) -> bool:
        """A layout is on its way: a ticket with the layout process, or the next round about to be sent."""
        return self.rounds.busy

    def _fail(self, message: str) -> None:
        """Stop laying out and say why, in the document and to whoever listens: one line, what to do included."""
        message = " ".join(message.split())
        self.rounds.stop()
        self._started = 0.0
        self.busy_row.setVisible(False)
        self.failure = message
        self.notice.setStyleSheet("QLabel { background: #fde2e2; color: #5c1010; padding: 6px; }")
        self.notice.setText(message)
        self.notice.setVisible(True)
        self.status.emit(message)
        self.layout_failed.emit(message)

    def cancel_layout(self) -> None:
        self.rounds.stop()
        self._started = 0.0
        self.busy_row.setVisible(False)
        self.status.emit("Layout cancelled. Collapse some groups or expand fewer, then try again.")

    def _draw(self) -> None:
        self.busy_row.setVisible(False)
        scene = self.model.level.scene
        try:
            layout = scene.compose()
            fitting = self.model.level.framing.settling is Settle.FIT
            if self.model.settle(layout.width, layout.height, self.view.viewport_now()):
                return  # a shallower level is being laid out
            looks = self.model.looks(n.node for n in layout.nodes)
            self.view.show_layout(layout, looks, self.model.edge_labeller(), keep_view=self._keep_view)
            notes = scene.notes
        except Exception as e:
            self._fail(_internal(e))
            return
        self.failure = None
        if notes:  # a style sheet costs a restyle of the label: only for a note that shows
            self.notice.setStyleSheet("QLabel { background: #fff4d6; color: #4a3a00; padding: 6px; }")
            self.notice.setText(" ".join(notes))
        self.notice.setVisible(bool(notes))
        self.depth.blockSignals(True)
        self.depth.setValue(scene.expanded_depth())
        self.depth.blockSignals(False)
        self._apply_highlight()
        self.ready = True
        elapsed = time.perf_counter() - self._started if self._started else 0.0
        boxes = sum(1 for n in layout.nodes if n.kind == "node")  # weight rows are inside their ops' boxes
        opened, since = self._expanded
        how_many = open_groups_text(scene.groups, scene.leaves, scene.expanded)  # as the report counts them
        self.status.emit(f"Expanded {plural(opened, 'group')} ({how_many}), laid out in "
                         f"{time.perf_counter() - since:.1f} s" if opened else
                         f"{plural(boxes, 'node')} and {plural(len(layout.groups), 'group')} shown ({how_many})"
                         + (f" (laid out in {elapsed:.2f} s)" if elapsed else ""))
        self._started = 0.0
        self._expanded = (0, 0.0)
        if fitting:
            self._frame_fit()
        self.graph_ready.emit()

    def fit(self) -> None:
        """Fit what is expanded, labels never below legibility (core/graph/framing.py decides): whole when it fits
        readably; else zoomed out to the legibility floor from where the program starts, saying what is below. Only
        an expansion that is still the view's own (the first view's) is stepped up to a shallower level."""
        layout = self.view.layout
        if layout is None:
            return
        if self.model.fit(layout.width, layout.height, self.view.viewport_now()):
            return  # a shallower level is being laid out (_expansion_changed); framed when drawn (_draw)
        self._frame_fit()

    def _frame_fit(self) -> None:
        frame = self.view.show_fit()
        if frame is not None and not frame.whole and self.view.layout is not None:
            self.status.emit(below_text(below(self.view.layout, frame.shown)))

    def set_weights_as_nodes(self, on: bool) -> None:
        """View > Show Weights as Nodes: parameters and buffers as boxes of their own, or rows of their users."""
        self.model.set_weights_as_nodes(on)  # announces DRAWING: laid out again (_model_changed)

    # -- user intent -------------------------------------------------------------------------------------------
    def redraw(self) -> None:
        """Draw the same graph again, keeping the view (the palette changed: every look is computed afresh)."""
        self._keep_view = True
        self.relayout()

    def _lay_out_again(self, keep_view: bool) -> None:
        """The user changed what is drawn: lay it out, keeping the view or not."""
        self._keep_view = keep_view
        self.relayout()

    # Expanding and collapsing are the model's: it announces an `Expansion`, which lays the graph out again here
    # (_expansion_changed), whoever asked (the view's group click, the context menu, the depth box, Find).
    def toggle_group(self, path: str) -> None:
        self.model.toggle_group(path)

    def expand_all(self) -> None:
        self.model.expand_all()

    def collapse_all(self) -> None:
        self.model.collapse_all()

    def expand_to_depth(self, depth: int) -> None:
        self.model.expand_to_depth(depth)

    def show_run_panel(self) -> None:
        self.panels.setVisible(True)
        self.panels.setCurrentWidget(self.run_panel)

    def go_to_level(self, depth: int) -> None:
        self.model.go_to_level(depth)  # the model announces the new level (_model_changed)

    def enter_subgraph(self, node: str, subgraph: str) -> None:
        self.model.enter_subgraph(node, subgraph)

    def open_subgraph_of(self, node: str) -> None:
        """Double-click on a HOP (cond, map, while_loop ...) or on one of its subgraph nodes: go inside. A HOP with
        several subgraphs (cond's two branches) offers them in a menu."""
        targets = self.model.subgraphs_of(node)
        if len(targets) == 1:
            self.enter_subgraph(*targets[0])
        elif targets:
            menu = QMenu(self)
            for hop, sub in targets:
                menu.addAction(f"Open {sub}", functools.partial(self.enter_subgraph, hop, sub))
            menu.popup(QCursor.pos())
            self.subgraph_menu = menu  # kept for tests and so it is not collected while shown

    def select(self, item: str | None) -> None:
        self.model.select(item)
        selected = self.model.selection
        for title, panel in self.panel_widgets.built.items():
            if title not in self._stale_panels:
                panel.show_item(selected)  # a node, or a module group Details shows
        if selected is not None and not self.job_tabs.is_panel(self.panels.currentWidget()):
            # a list of results being walked (nodes by error, hottest nodes) stays in front; else Details shows it
            self.panels.setCurrentWidget(self.panel_widgets.get("Details", self.panels.currentWidget()))

    def _refresh_current_panel(self) -> None:
        """Panels are filled when first shown: a 10k-node program's code view or symbol table costs time nobody
        should pay for a tab they do not open."""
        for title, panel in self.panel_widgets.built.items():
            if panel is self.panels.currentWidget() and title in self._stale_panels:
                self._stale_panels.discard(title)
                panel.set_context(self.model.context())
                panel.show_item(self.model.selection)

    def reveal(self, node: str) -> None:
        """Select a node and bring it on screen, expanding collapsed groups as needed (once laid out, if a layout is
        under way: Back and Forward put an expansion back first)."""
        if self.model.level.scene.visible_item(node) != node:
            self.model.select(node)
            self.model.reveal(node)  # announced: laid out again, keeping the view (_expansion_changed)
        if not self.ready or self.laying_out:
            self.model.select(node)
            self.graph_ready.connect(lambda: self._center(node), Qt.ConnectionType.SingleShotConnection)
            return
        self._center(node)

    def _center(self, node: str) -> None:
        self.select(node)
        self.view.center_on_item(node)

    def show_symbol(self, name: str, stands_for: str | None = None) -> bool:
        """Show the Symbols panel with symbol `name` (or the one standing for `stands_for`) picked and its nodes
        highlighted; False when the program has no such symbol."""
        self.panels.setVisible(True)
        self.panels.setCurrentWidget(self.symbols_panel)  # fills it if it was stale
        self._refresh_current_panel()
        return self.symbols_panel.highlight_symbol(name, stands_for)

    def mark(self, nodes: list[str]) -> None:
        self.model.marked = nodes

    def _model_changed(self, change: DocumentEvent) -> None:
        if isinstance(change, Expansion):
            self._expansion_changed(change)
        elif change is DocumentChange.LEVEL:
            self._show_level()
        elif change is DocumentChange.DRAWING:
            self._lay_out_again(keep_view=True)
        else:
            self._apply_highlight()

    def _expansion_changed(self, expansion: Expansion) -> None:
        """Groups opened or closed: lay out what the new expansion needs. Fit and the first view stepping up keep
        stepping; any other change (the model ended that) keeps the view or not as its cause says."""
        leaves = self.model.level.scene.leaves  # modules of one op: drawn as that op, not as a group that opens
        opened = (sum(1 for path, now in expansion.groups if now and path not in leaves)
                  if expansion.cause is ExpansionCause.OVERVIEW else 0)
        self._expanded = (opened, time.perf_counter())  # Expand all (or a depth) says how long it took (_draw)
        if expansion.stepping:
            self._keep_view = False
            self.relayout()
        else:
            self._lay_out_again(keep_view=expansion.keep_view)

    def _apply_highlight(self) -> None:
        h = self.model.highlight()
        self.view.set_states(h.nodes, h.groups, h.edges, h.hub)

    # -- the tab contract (app/graph/tab.py) --------------------------------------------------------------------
    def source_file(self) -> str | None:
        return self.model.archive.path

    def current_program(self) -> DocumentWidget | None:
        return self

    def graphs(self) -> list[DocumentWidget]:
        return [self]

    def can_save_program(self) -> bool:
        return True

    def program_file(self) -> str | None:
        return self.model.archive.path

    def can_save_decomposed(self) -> bool:
        return False

    def save_decomposed_dialog(self) -> None:
        pass

    def release(self) -> None:
        pass


def show_weights_as_nodes(window: QWidget, on: bool) -> None:
    """View > Show Weights as Nodes for every graph in `window` (compare views too), remembered for the next start."""
    app_settings().setValue(WEIGHTS_SETTING, on)
    for doc in window.findChildren(DocumentWidget):
        doc.set_weights_as_nodes(on)


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


def _internal(e: BaseException) -> str:
    return (f"Could not draw the graph: internal error {type(e).__name__}: {e}. Collapse all or go back a level "
            "to see the rest; please report this with the file.")


