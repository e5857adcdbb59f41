"""The trace view's compiles as a tree: frame -> compile id ([0/0], [0/1] a recompile, [1/0_1] a restart) -> the
graphs it made. Each compile row shows its status, time (by phase in the tooltip), the user's function and line, and
a cache hit. `compile_selected(Compile)` and `graph_selected(Compile, GraphEntry)` say what the user picked;
`graph_opened(Compile, GraphEntry)` is a double-click on a graph. What the rows say is core/trace/outline.py's."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.qt import child_items, top_level_items
from pt2_viewer.core.trace import outline
from pt2_viewer.core.trace.model import Compile, Trace
from pt2_viewer.core.trace.outline import GraphEntry

ROLE = Qt.ItemDataRole.UserRole
COLUMNS = ("Compile", "Status", "Time", "Graphs", "Cache")
OPEN_UP_TO = 8  # compiles of a rank whose graphs are listed open
STATUS_COLOURS = {"graph break": theme.HIGHLIGHT, "failed": theme.MATCH}


@dataclass
class GraphRow:
    """What a graph's row holds: the compile and which of its graphs (a tuple would reach Qt as a list)."""

    compile: Compile
    graph: GraphEntry


class CompilesTree(QTreeWidget):
    compile_selected = Signal(object)
    graph_selected = Signal(object, object)
    graph_opened = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(list(COLUMNS))
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.itemSelectionChanged.connect(self._selected)
        self.itemDoubleClicked.connect(self._double_clicked)

    def show_rank(self, trace: Trace, rank: int | None) -> None:
        """The compiles of `rank`, frames expanded; the graphs under each compile too where there are few compiles
        (`OPEN_UP_TO`), else folded."""
        self.clear()
        frames = outline.frames(trace, rank)
        open_compiles = sum(len(f.compiles) for f in frames) <= OPEN_UP_TO
        for frame in frames:
            top = QTreeWidgetItem(self, [frame.title])
            top.setFirstColumnSpanned(True)
            first = frame.compiles[0].frame
            if first is not None:
                top.setToolTip(0, f"{first.function} at {first.file}:{first.line}")
            for compile_ in frame.compiles:
                self._compile_row(top, compile_).setExpanded(open_compiles)
            top.setExpanded(True)

    def _compile_row(self, parent: QTreeWidgetItem, compile_: Compile) -> QTreeWidgetItem:
        hit = outline.cache_text(compile_)
        made = outline.graphs(compile_)
        row = QTreeWidgetItem(parent, [outline.title(compile_), compile_.status, outline.seconds_text(compile_),
                                       ", ".join(dict.fromkeys(g.kind for g in made)), "cache hit" if hit else ""])
        row.setData(0, ROLE, compile_)
        if compile_.status in STATUS_COLOURS:  # what the user may want to fix stands out
            row.setForeground(1, STATUS_COLOURS[compile_.status])
        if compile_.frame is not None:
            row.setToolTip(0, f"{compile_.frame.function} at {compile_.frame.file}:{compile_.frame.line}")
        row.setToolTip(2, outline.phases_text(compile_))
        if hit:
            row.setToolTip(4, hit)
        for graph in made:
            item = QTreeWidgetItem(row, [graph.title])
            item.setData(0, ROLE, GraphRow(compile_, graph))
            item.setToolTip(0, f"Inductor's code: select to read it ({outline.provenance_note(compile_)})"
                            if graph.is_code else "Double-click to open it in the graph view")
        return row

    def compile_ids(self) -> list[str]:
        """Every compile id the tree lists, in order (what a test or a screenshot reads back)."""
        return [str(data.id) for row in self._compile_rows() if isinstance(data := row.data(0, ROLE), Compile)]

    def _compile_rows(self) -> list[QTreeWidgetItem]:
        return [row for top in top_level_items(self) for row in child_items(top)]

    def compile_item(self, compile_: Compile) -> QTreeWidgetItem | None:
        return next((row for row in self._compile_rows() if row.data(0, ROLE) is compile_), None)

    def select_compile(self, compile_: Compile) -> None:
        item = self.compile_item(compile_)
        if item is not None:
            self.setCurrentItem(item)
            self.scrollToItem(item)

    def select_graph(self, compile_: Compile, graph: GraphEntry) -> None:
        """Pick the row of one of `compile_`'s graphs (its kind and place among graphs of that kind)."""
        row = self.compile_item(compile_)
        for item in child_items(row) if row is not None else []:
            data = item.data(0, ROLE)
            if isinstance(data, GraphRow) and (data.graph.kind, data.graph.index) == (graph.kind, graph.index):
                self.setCurrentItem(item)
                self.scrollToItem(item)
                return

    def _selected(self) -> None:
        items = self.selectedItems()
        data = items[0].data(0, ROLE) if items else None
        if isinstance(data, Compile):
            self.compile_selected.emit(data)
        elif isinstance(data, GraphRow):
            self.graph_selected.emit(data.compile, data.graph)

    def _double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        data = item.data(0, ROLE)
        if isinstance(data, GraphRow):
            self.graph_opened.emit(data.compile, data.graph)
