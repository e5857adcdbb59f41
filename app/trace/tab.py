"""A torch.compile trace's tab (issue 40): a rank selector where the trace has several ranks and a line saying where
they differ; the compiles as a tree (app/trace/compiles_tree.py); the graph breaks and the recompiles as lists of
actions (app/trace/actions_view.py); beside them, what is picked: a compile's details, a graph's or Inductor's code
read only (app/deploy/code_view.py), or a recompile's graph diffed with the one before. The trace was read off the
GUI thread (app/trace/opening.py); everything said here in words is core/trace/outline.py's.

Inductor's code with provenance shows its kernels under it (app/trace/kernel_panel.py, core/trace/kernel_code.py):
the kernel at the cursor with its nodes, and the graph those nodes are in, opened with them selected.

`graph_opened(Compile, GraphEntry)`: a graph double-clicked, for the window to open in the graph view.
`nodes_opened(Compile, GraphEntry, nodes, kernel)`: open that graph with these nodes (the kernel's) selected."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.deploy.code_view import CodeView
from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.trace.actions_view import ActionsView
from pt2_viewer.app.trace.compiles_tree import CompilesTree
from pt2_viewer.app.trace.kernel_panel import KernelPanel
from pt2_viewer.core.trace import outline
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.kernel_code import CodeLinks, code_links
from pt2_viewer.core.trace.model import Compile, Trace
from pt2_viewer.core.trace.outline import GraphEntry
from pt2_viewer.core.trace.summary import rank_differences

NO_LINKS = "no provenance for this code: torch mapped none of its kernels"


class TraceTab(DocumentTab):
    graph_opened = Signal(object, object)
    compare_requested = Signal(object, object)
    nodes_opened = Signal(object, object, object, str)

    def __init__(self, trace: Trace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace = trace
        self.ranks = trace.ranks
        self.rank: int | None = self.ranks[0] if self.ranks else None
        self.name = QLabel(f"<b>{Path(trace.path).name}</b>:")
        self.name.setToolTip("\n".join(str(log) for log in trace.logs))
        self.headline = QLabel()
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.rank_choice = QComboBox()
        self.rank_choice.addItems([f"rank {r}" for r in self.ranks])
        self.rank_choice.setToolTip(f"{len(self.ranks)} ranks, one log each: each rank's own compiles, graph breaks "
                                    "and recompiles")
        self.rank_choice.currentIndexChanged.connect(lambda i: self.show_rank(self.ranks[i]))
        several = len(self.ranks) > 1
        self.rank_choice.setVisible(several)
        rank_label = QLabel(f"{len(self.ranks)} ranks, showing")
        rank_label.setVisible(several)
        differences = rank_differences(trace)
        self.differences = _note("Ranks differ: " + "; ".join(differences), differences)
        self.damage = _note(f"Damaged: {trace.damage}; the entries before the damage are shown.", trace.damage)
        top = QHBoxLayout()
        top.addWidget(self.name)
        top.addWidget(rank_label)
        top.addWidget(self.rank_choice)
        top.addWidget(self.headline, 1)

        self.tree = CompilesTree()
        self.breaks = ActionsView()
        self.recompiles = ActionsView()
        self.lists = QTabWidget()
        self.lists.addTab(self.tree, "Compiles")
        self.lists.addTab(self.breaks, "Graph breaks")
        self.lists.addTab(self.recompiles, "Recompiles")
        self.code = CodeView()
        self.kernels = KernelPanel()
        self.kernels.setVisible(False)
        self.shown: tuple[Compile, GraphEntry] | None = None  # the graph or code whose text is shown
        self._links: dict[tuple[int, int], CodeLinks | str | None] = {}  # (id of a compile, which code): its
        # links, read once, or why its provenance cannot be read
        self.code_side = QSplitter(Qt.Orientation.Vertical)
        self.code_side.addWidget(self.code)
        self.code_side.addWidget(self.kernels)
        self.code_side.setStretchFactor(0, 3)
        self.code_side.setStretchFactor(1, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.lists)
        splitter.addWidget(self.code_side)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 0)
        layout.addLayout(top)
        layout.addWidget(self.differences)
        layout.addWidget(self.damage)
        layout.addWidget(splitter, 1)

        self.tree.compile_selected.connect(self.show_compile)
        self.tree.graph_selected.connect(self.show_graph)
        self.tree.graph_opened.connect(self._open_graph)
        for view in (self.breaks, self.recompiles):
            view.source_requested.connect(self.open_source)
            view.compile_requested.connect(self.select_compile)
        self.recompiles.diff_requested.connect(self.show_diff)
        self.recompiles.compare_requested.connect(self._compare)
        self.code.editor.cursorPositionChanged.connect(
            lambda: self.kernels.show_line(self.code.editor.textCursor().blockNumber() + 1))
        self.kernels.line_requested.connect(self.code.go_to_line)
        self.kernels.nodes_requested.connect(self._open_nodes)
        self.kernels.kernel_shown.connect(self.code.mark_lines)
        self.show_rank(self.rank)

    def source_file(self) -> str | None:
        return str(self.trace.path)

    def show_rank(self, rank: int | None) -> None:
        self.rank = rank
        self.headline.setText(("— " if len(self.ranks) > 1 else "") + outline.headline(self.trace, rank))
        self.tree.show_rank(self.trace, rank)
        breaks, recompiles = outline.breaks_of(self.trace, rank), outline.recompiles_of(self.trace, rank)
        self.breaks.show_breaks(breaks)
        self.recompiles.show_recompiles(self.trace, recompiles)
        self.lists.setTabText(1, f"Graph breaks ({len(breaks)})")
        self.lists.setTabText(2, f"Recompiles ({len(recompiles)})")
        first = next((c for c in self.trace.compiles if c.rank == rank), None)
        if first is not None:
            self.tree.select_compile(first)
        else:
            self.code.show_text("", "This rank compiled nothing.", "")
        self.status.emit(f"{Path(self.trace.path).name}: {outline.headline(self.trace, rank)}"
                         + (f" on rank {rank}" if rank is not None else ""))

    def compile_named(self, compile_id: str) -> Compile | None:
        return next((c for c in self.trace.compiles if str(c.id) == compile_id and c.rank == self.rank), None)

    def select_compile(self, compile_id: str) -> None:
        """Show `compile_id` (of the rank shown) in the tree, and its details."""
        compile_ = self.compile_named(compile_id)
        if compile_ is not None:
            self.lists.setCurrentWidget(self.tree)
            self.tree.select_compile(compile_)

    def show_compile(self, compile_: Compile) -> None:
        self.shown = None
        self.kernels.show_links(None)
        self.code.show_text(f"{outline.title(compile_)}: details", outline.detail(self.trace, compile_), "")

    def show_graph(self, compile_: Compile, graph: GraphEntry) -> None:
        self.shown = (compile_, graph)
        links = self.links(compile_, graph.index) if graph.is_code else None
        self.kernels.show_links(None)
        if not graph.is_code:
            note = ""
        elif links is None:
            said = outline.provenance_note(compile_)
            problem = self._links.get((id(compile_), graph.index))
            note = f" ({problem if isinstance(problem, str) else said if said == outline.NO_PROVENANCE else NO_LINKS})"
        else:
            note = (f" ({len(links.calls())} kernel calls linked to their nodes: click a kernel, or pick it below)")
        self.code.show_text(f"{compile_.id} {graph.title}{note}", graph.artifact.text(), "python")
        self.kernels.show_links(links)
        code, kernels = self.code_side.sizes()
        if links is not None and kernels == 0:  # shown the first time: a third of the height, not none
            self.code_side.setSizes([2 * (code + kernels) // 3, (code + kernels) // 3])

    def links(self, compile_: Compile, index: int) -> CodeLinks | None:
        """The kernels of `compile_`'s `index`-th output code linked to their nodes; None without provenance (a
        damaged artifact is said in one line)."""
        key = (id(compile_), index)
        if key not in self._links:
            try:
                self._links[key] = code_links(compile_, index)
            except TraceError as e:
                self._links[key] = str(e)
                self.status.emit(str(e))
        links = self._links[key]
        return links if isinstance(links, CodeLinks) else None

    def _code_graphs(self, compile_: Compile, graph: GraphEntry) -> list[GraphEntry]:
        """The output codes whose kernels compute nodes of `graph`: a post-grad graph's own code (the backward's
        for the backward's), every code of the compile for the Dynamo graph."""
        codes = [g for g in outline.graphs(compile_) if g.is_code]
        return codes if graph.kind == "dynamo" else [g for g in codes if g.index == graph.index] \
            if graph.kind == "post_grad" else []

    def kernel_nodes(self, compile_: Compile, graph: GraphEntry) -> frozenset[str]:
        """The nodes of `graph` some kernel of its compile computes, by the trace's provenance."""
        found: set[str] = set()
        for code in self._code_graphs(compile_, graph):
            links = self.links(compile_, code.index)
            for kernel in links.kernels if links is not None else []:
                found.update(kernel.post_grad if graph.kind == "post_grad" else kernel.pre_grad)
        return frozenset(found)

    def show_kernel_of(self, compile_: Compile, graph: GraphEntry, node: str) -> bool:
        """Inductor's code with the first kernel that computes `node` of `graph` picked; False (said) when none does."""
        for code in self._code_graphs(compile_, graph):
            links = self.links(compile_, code.index)
            sites = links.sites_of(node, graph.kind) if links is not None else []
            if sites:
                self.lists.setCurrentWidget(self.tree)
                self.tree.select_graph(compile_, code)
                if self.shown != (compile_, code):
                    self.show_graph(compile_, code)
                self.code.go_to_line(sites[0].end)
                self.code.editor.setFocus()
                return True
        self.say(f"No kernel of {compile_.id} computes {node}, by this trace's provenance.")
        return False

    def _open_nodes(self, kind: str, nodes: tuple[str, ...]) -> None:
        """The post-grad graph of the code shown (or the compile's Dynamo graph) opened with `nodes` selected."""
        if self.shown is None:
            return
        compile_, code = self.shown
        index = code.index if kind == "post_grad" else 0
        graph = next((g for g in outline.graphs(compile_) if g.kind == kind and g.index == index), None)
        if graph is None:
            self.say(f"{compile_.id} logged no {outline.GRAPH_TITLES[kind]} to open.")
            return
        kernel = self.kernels.kernel
        self.nodes_opened.emit(compile_, graph, nodes, kernel.kernel if kernel is not None else "")

    def _pair(self, compile_id: str) -> tuple[Compile, Compile] | None:
        """The compile `compile_id` replaced and `compile_id` itself, when both made a Dynamo graph."""
        after = self.compile_named(compile_id)
        before = outline.replaced(self.trace, after) if after is not None else None
        if after is None or before is None or outline.graph_diff(before, after) is None:
            self.code.show_text("", f"{compile_id} has no earlier Dynamo graph to diff with.", "")
            return None
        return before, after

    def show_diff(self, compile_id: str) -> None:
        """The Dynamo graph of the compile `compile_id` replaced, against its own, as a unified diff."""
        pair = self._pair(compile_id)
        if pair is not None:
            before, after = pair
            self.code.show_text(f"{before.id} → {after.id}: Dynamo graph", outline.graph_diff(before, after) or "",
                                "diff")

    def _compare(self, compile_id: str) -> None:
        pair = self._pair(compile_id)
        if pair is not None:
            self.compare_requested.emit(*pair)

    def say(self, message: str) -> None:
        """A problem in one line (a graph that cannot be opened), in the status line and above the text shown."""
        self.code.title.setText(message)
        self.status.emit(message)

    def _open_graph(self, compile_: Compile, graph: GraphEntry) -> None:
        self.show_graph(compile_, graph)
        self.graph_opened.emit(compile_, graph)

    def open_source(self, file: str, line: int) -> None:
        from pt2_viewer.app.widgets.source_view import open_source  # pygments: only once source is shown

        open_source(file, line, self)


def _note(text: str, shown: object) -> QLabel:
    """A line above the lists, shown only when it has something to say."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setStyleSheet(f"QLabel {{ color: {theme.HIGHLIGHT.name()}; }}")
    label.setVisible(bool(shown))
    return label
