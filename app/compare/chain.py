"""A program through the pipeline's stages, side by side: source | core ATen | `.pte`, each adjacent pair diffed.

`ChainView` shows a `Chain` (core/diff/chain.py): one graph per stage in a row, and under them one change list per
adjacent pair. Each pair is the diff panel of a two-program comparison (app/compare/diff_panel.py `attach_diff`),
handed a `_Pair` that stands for that comparison: its session and its two stages' documents and Details. So each
pair paints its two graphs (a middle stage shows its diff against the stage before; its diff against the next is in
its overlay menu as "Diff → next"), its list reveals a change on both of its graphs, and F3 steps through the pair
whose list or graph holds the focus. Selecting a node in any graph selects its counterparts in every other graph,
walking the pairs' links along the chain (`Chain.counterparts`); `selection_synced(stage, node)` says it is done.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from pt2_viewer.app.compare.diff_panel import DiffPanel, attach_diff
from pt2_viewer.app.compare.pipeline_files import ask_pipeline_files as ask_files
from pt2_viewer.app.compare.view import _fraction, program_shown
from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.view import GraphView
from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.app.widgets.common import splitter
from pt2_viewer.core.compare.session import LEFT, RIGHT, CompareSession, LinkedDocumentModel
from pt2_viewer.core.diff.chain import Chain
from pt2_viewer.core.diff.overlay import DIFF_OVERLAY, diff_overlay
from pt2_viewer.core.graph.ids import node_of

NEXT_OVERLAY = f"{DIFF_OVERLAY} → next"


class _Pair:
    """Two adjacent stages of a chain as the comparison `attach_diff` paints and drives (its `Comparison`)."""

    def __init__(self, view: ChainView, i: int) -> None:
        self.chain_view, self.i = view, i
        self.session: CompareSession = view.chain.sessions[i]
        self.docs: Mapping[str, DocumentWidget] = {LEFT: view.docs[i], RIGHT: view.docs[i + 1]}
        self.details: Mapping[str, DetailsPanel] = {LEFT: view.details[i], RIGHT: view.details[i + 1]}
        self.link = view.link
        self.link_text = view.link_text

    def show_pair(self, names: Mapping[str, str | None]) -> None:
        """A change of this pair shown on its two stages: each node selected and brought on screen (the stages
        stay linked, keeping their new offsets, `ChainView._scroll`)."""
        for side, name in names.items():
            stage = self.i if side == LEFT else self.i + 1
            self.chain_view.docs[stage].model.select(name)
            if name is not None:
                self.chain_view.show_in(stage, name)

    def isAncestorOf(self, child: QWidget) -> bool:  # noqa: N802 (Qt's name, asked by the diff panel's F3)
        """F3 is this pair's when the focus is in its change list or in the graph it paints (the later stage; the
        first stage's graph is the first pair's)."""
        view = self.chain_view
        ours: list[QWidget] = [view.docs[self.i + 1], *([view.docs[0]] if self.i == 0 else [])]
        if self.i < len(view.diff_panels):
            ours.append(view.diff_panels[self.i])
        return any(w is child or w.isAncestorOf(child) for w in ours)


class ChainView(DocumentTab):
    """Emits `ready` once every stage's graph is on screen, `selection_synced(stage, node)` after a selection has
    been followed through the chain, `status(str)` for the status bar."""

    ready = Signal()
    selection_synced = Signal(int, str)

    def __init__(self, chain: Chain, layouts: LayoutClient, parent: QWidget | None = None, *,
                 interactive: bool = True) -> None:
        super().__init__(parent)
        self.chain = chain
        self._syncing = False
        self._revealing: set[int] = set()  # stages whose counterpart is being revealed (laid out again)
        self.docs = [DocumentWidget(model, layouts, interactive=interactive) for model in chain.models]
        self._pending = set(range(len(self.docs)))
        self._offsets = [(0.0, 0.0)] * len(self.docs)  # where each view sits relative to the first (linked views)
        self.details = [DetailsPanel() for _ in self.docs]
        for doc, panel, stage in zip(self.docs, self.details, chain.stages):
            panel.set_program(stage.program, doc.model.level.graph, doc.model.level.index, archive=stage.archive)
            panel.node_requested.connect(doc.reveal)
        self.link = QCheckBox("Link views")
        self.link.setToolTip("Zoom and pan every graph together")
        self.link.setChecked(True)
        self.link.toggled.connect(self._link_toggled)
        self.caption = QLabel(" ⟶ ".join(f"<b>{s.title}</b>" for s in chain.stages)
                              + " &nbsp; (each pair diffed; select a node to see it in every stage)")
        self.link_text = QLabel("Select a node in any stage to see what it became and came from in the others.")
        self.link_text.setWordWrap(True)
        self.diff_panels: list[DiffPanel] = []
        # the last pair first: a middle stage ends painted by its diff against the stage before it
        for i in reversed(range(len(chain.sessions))):
            self.diff_panels.insert(0, attach_diff(_Pair(self, i), chain.diffs[i]))
            if i + 1 < len(chain.sessions):
                later = diff_overlay(chain.diffs[i + 1], "a")
                later.name = NEXT_OVERLAY
                self.docs[i + 1].tools.add_overlay(later, show=False)

        v = QVBoxLayout(self)
        v.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(self.link)
        v.addLayout(top)
        stages = QSplitter(Qt.Orientation.Horizontal)
        for doc in self.docs:
            doc.panels.setVisible(False)  # room for the graphs; the change lists are the panels here
            stages.addWidget(doc)
        v.addWidget(self.link_text)
        bottom = QWidget()
        row = QHBoxLayout(bottom)
        row.setContentsMargins(0, 0, 0, 0)
        for session, diff_panel in zip(chain.sessions, self.diff_panels):
            box = QVBoxLayout()
            box.addWidget(QLabel(f"<b>{session.left_title}</b> ⟶ <b>{session.right_title}</b>"))
            box.addWidget(diff_panel, 1)
            row.addLayout(box, 1)
        self.details_tabs = QTabWidget()
        for panel, stage in zip(self.details, chain.stages):
            self.details_tabs.addTab(panel, stage.title)
        row.addWidget(self.details_tabs, 1)
        v.addWidget(splitter(Qt.Orientation.Vertical, stages, bottom, sizes=(560, 300), stretch=(3, 1),
                             remember="compare-chain"), 1)

        for k, doc in enumerate(self.docs):
            doc.view.node_clicked.connect(lambda name, s=k: self.select(s, name))
            doc.view.background_clicked.connect(lambda s=k: self.select(s, None))
            doc.view.view_changed.connect(lambda v=doc.view: self._sync_views(v))
            doc.graph_ready.connect(lambda s=k: self._stage_ready(s))
            doc.status.connect(self.status)

    # -- the tab contract (app/document/tab.py) ------------------------------------------------------------------
    def source_file(self) -> str | None:
        return self.chain.stages[0].archive.path

    def graphs(self) -> list[DocumentWidget]:
        return list(self.docs)

    def title(self) -> str:
        return " ⟶ ".join(Path(s.archive.path).name for s in self.chain.stages)

    def _stage_ready(self, stage: int) -> None:
        if stage in self._pending:
            self._pending.discard(stage)
            if not self._pending:
                self._sync_views(self.docs[0].view)
                self.ready.emit()

    # -- selection through the chain -----------------------------------------------------------------------------
    def select(self, stage: int, node: str | None) -> None:
        """The user selected `node` in `stage` (its document already selected it): select its counterparts in every
        other stage, scroll each to the first, and say the path in the line above the graphs."""
        node = node_of(node)  # a group has no counterparts
        found = self.chain.counterparts(stage, node) if node is not None else {}
        for k, doc in enumerate(self.docs):
            model = doc.model
            assert isinstance(model, LinkedDocumentModel)
            doc.mark([])
            if k == stage:
                model.linked = []
                continue
            model.linked = found.get(k, [])
            model.select(None)  # painted again, the linked nodes as selected
        self.details[stage].show_node(node)
        self.details_tabs.setCurrentIndex(stage)
        for k, names in found.items():
            if k != stage:
                self.details[k].show_node(names[0] if names else None)
                if names:
                    self.show_in(k, names[0])
        if node is not None:
            path = [", ".join(found.get(k) or ["(none)"]) for k in range(len(self.docs))]
            self.link_text.setText(" ⟶ ".join(path))
            self.selection_synced.emit(stage, node)

    def selected(self, stage: int) -> list[str]:
        """What is selected in `stage`: the user's own selection, or the counterparts of another stage's."""
        model = self.docs[stage].model
        assert isinstance(model, LinkedDocumentModel)
        return [model.selection] if model.selection else list(model.linked)

    def show_in(self, stage: int, node: str) -> None:
        """Bring a counterpart on screen: the groups hiding it opened (once laid out again), then scrolled to at the
        graph's zoom; linked views then keep each graph where it is relative to the others (`_offsets`)."""
        doc = self.docs[stage]
        if doc.model.reveal(node):
            self._revealing.add(stage)
            doc.graph_ready.connect(lambda: self._scroll(stage, node), Qt.ConnectionType.SingleShotConnection)
        else:
            self._scroll(stage, node)

    def _scroll(self, stage: int, node: str) -> None:
        self._revealing.discard(stage)
        self._syncing = True
        try:
            self.docs[stage].view.scroll_to_item(self.docs[stage].model.level.scene.visible_item(node))
        finally:
            self._syncing = False
        first = _fraction(self.docs[0].view)
        self._offsets = [(fx - first[0], fy - first[1]) for fx, fy in (_fraction(d.view) for d in self.docs)]

    # -- linked zoom and pan -------------------------------------------------------------------------------------
    def _link_toggled(self, on: bool) -> None:
        if on:
            self._offsets = [(0.0, 0.0)] * len(self.docs)
            self._sync_views(self.docs[0].view)

    def _sync_views(self, src: GraphView) -> None:
        """Give every other graph the zoom of `src` and its relative position in its own scene, each graph keeping
        its offset from the others (a followed selection sets them)."""
        if not self.link.isChecked() or self._syncing or self._revealing:
            return
        self._syncing = True
        try:
            views = [d.view for d in self.docs]
            (fx, fy), (ox, oy) = _fraction(src), self._offsets[views.index(src)]
            for dst, (dx, dy) in zip(views, self._offsets):
                if dst is not src:
                    dst.setTransform(src.transform())
                    d = dst.sceneRect()
                    dst.centerOn(d.left() + (fx - ox + dx) * d.width(), d.top() + (fy - oy + dy) * d.height())
        finally:
            self._syncing = False


def ask_pipeline_files(parent: QWidget, program: str | None = None) -> tuple[str, str, str | None] | None:
    """Ask for the program's core ATen decomposition (a `.pt2`, as Decompose… saves it), its `.pte` (as Lower to
    ExecuTorch… writes it) and the ETRecord, the one beside the `.pte` unless another is chosen, in one dialog that
    says what each is for (app/compare/pipeline_files.py). `program` is the first stage's file (by default the one
    the window's Program menu acts on). None when the user cancels."""
    files = ask_files(parent, program or program_shown(parent))
    return None if files is None else (files.core, files.pte, files.etrecord)
