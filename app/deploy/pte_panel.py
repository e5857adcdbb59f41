"""The ExecuTorch panel beside a `.pte` method's graph: the method's facts, its memory plan (a picture of lifetimes
and a table of each planned tensor's buffer, offset and size), its delegate blocks, and the file's constants and
segments. Rows come from core/pte/tables.py; clicking one selects its node in the graph."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from pt2_viewer.app.deploy.memory_picture import MemoryPicture
from pt2_viewer.app.panels import fixed_font, make_table
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.pte.tables import Row, data_rows, delegate_rows, memory_rows, method_facts

NODE_ROLE = Qt.ItemDataRole.UserRole


class PtePanel(Panel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.facts = make_table(["", ""], stretch_column=1)
        self.facts.setHeaderHidden(True)
        self.facts.setMaximumHeight(200)
        self.picture = MemoryPicture()
        self.memory = make_table(["tensor", "buffer", "offset", "bytes", "lives", "type"], stretch_column=5)
        self.delegates = make_table(["#", "backend", "payload", "stored", "ops it took over", "compile specs"],
                                    stretch_column=4)
        self.data = make_table(["data", "bytes", "where", "holds"], stretch_column=3)
        self.peak = QLabel()
        self.peak.setWordWrap(True)
        memory_page = QSplitter(Qt.Orientation.Vertical)
        memory_page.addWidget(self.picture)
        memory_page.addWidget(self.memory)
        memory_page.setSizes([180, 400])
        self.tabs = QTabWidget()
        self.tabs.addTab(memory_page, "Memory plan")
        self.tabs.addTab(self.delegates, "Delegates")
        self.tabs.addTab(self.data, "Constants && segments")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.facts)
        layout.addWidget(self.peak)
        layout.addWidget(self.tabs, 1)
        for table in (self.memory, self.delegates, self.data):
            table.itemClicked.connect(self._clicked)
        self.picture.tensor_clicked.connect(self._tensor_clicked)
        self._value_rows: dict[str, QTreeWidgetItem] = {}
        self._producers: dict[str, str] = {}

    def set_context(self, context: ProgramContext) -> None:
        et = context.archive.executorch if context.archive else None
        for t in (self.facts, self.memory, self.delegates, self.data):
            t.clear()
        if et is None:
            self.peak.setText("This program is not an ExecuTorch .pte.")
            self.picture.set_plan(None)
            return
        try:
            method = et.method(context.program.name)
        except KeyError:
            self.peak.setText(f"The file has no method '{context.program.name}'.")
            return
        mono = fixed_font()
        for k, v in method_facts(et, method):
            item = QTreeWidgetItem([k, v])
            item.setFont(1, mono)
            self.facts.addTopLevelItem(item)
        self.peak.setText(f"Peak planned memory: <b>{method_facts(et, method)[6][1]}</b>")
        self.picture.set_plan(method.memory)
        self._value_rows = {}
        self._producers = {}
        for row in memory_rows(method, context.program):
            item = self._add(self.memory, row)
            self._value_rows[row.cells[0]] = item
            self._producers[row.cells[0]] = row.node
        for row in delegate_rows(method):
            self._add(self.delegates, row)
        for row in data_rows(et):
            self._add(self.data, row)
        self.tabs.setTabText(1, f"Delegates ({len(method.delegates)})")

    def _add(self, table: QTreeWidget, row: Row) -> QTreeWidgetItem:
        item = QTreeWidgetItem(list(row.cells))
        for i, text in enumerate(row.cells):
            if len(text) > 24:  # a long cell (the ops a delegate took over) reads whole on hover
                item.setToolTip(i, text)
        item.setData(0, NODE_ROLE, row.node)
        if row.node:
            item.setToolTip(0, f"Select {row.node} in the graph")
        table.addTopLevelItem(item)
        return item

    def show_node(self, name: str | None) -> None:
        pass  # the tables are per method, not per node

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        node = item.data(0, NODE_ROLE)
        if node:
            self.picture.select(item.text(0))
            self.node_requested.emit(node)

    def _tensor_clicked(self, value: str) -> None:
        item = self._value_rows.get(value)
        if item is not None:
            self.memory.setCurrentItem(item)
            self.memory.scrollToItem(item)
        node = self._producers.get(value)
        if node:
            self.node_requested.emit(node)


def pte_panels(archive: Archive) -> dict[str, Panel]:
    """The panels a kind of file adds beside its graph (DocumentWidget's `extra_panels`): a `.pte`'s ExecuTorch
    panel."""
    return {"ExecuTorch": PtePanel()} if archive.executorch is not None else {}
