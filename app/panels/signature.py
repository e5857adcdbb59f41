"""The signature panel: the program's inputs and outputs (pt2_viewer.core.graph.summary.signature_rows) with kind,
target, dtype and shape; clicking a row selects its node (an input's placeholder, an output's producer).

Inside a HOP subgraph it lists that subgraph's own inputs and outputs.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import QTreeWidgetItem, QVBoxLayout, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.panels import fixed_font, make_table
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.app.qt import child_items, top_level_items
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.graph.summary import SignatureRow, signature_rows
from pt2_viewer.core.model.node_kinds import input_kinds, node_kind

COLUMNS = ["name", "kind", "target", "dtype", "shape"]
NODE_ROLE = Qt.ItemDataRole.UserRole


class SignaturePanel(Panel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[SignatureRow] = []
        self.tree = make_table(COLUMNS, stretch_column=2)
        self.tree.setRootIsDecorated(True)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)

    def set_context(self, context: ProgramContext) -> None:
        program, graph = context.program, context.graph
        self.rows = signature_rows(program, graph)
        kinds = input_kinds(program) if graph is program.graph else None
        self.tree.clear()
        mono = fixed_font()
        bold = QFont(self.font())
        bold.setBold(True)
        for direction in ("input", "output"):
            rows = [r for r in self.rows if r.direction == direction]
            group = QTreeWidgetItem([f"{direction.capitalize()}s ({len(rows)})"])
            group.setFont(0, bold)
            self.tree.addTopLevelItem(group)
            group.setFirstColumnSpanned(True)
            for row in rows:
                item = QTreeWidgetItem([row.name, row.kind, row.target, row.dtype, row.shape])
                item.setData(0, NODE_ROLE, row.node)
                for col in (0, 2, 3, 4):
                    item.setFont(col, mono)
                node = graph.node_by_name.get(row.node)
                if node is not None:
                    item.setBackground(1, QBrush(theme.kind_color(node_kind(node, kinds))))
                item.setToolTip(0, f"Click to select {row.node}")
                group.addChild(item)
        self.tree.expandAll()

    def show_node(self, name: str | None) -> None:
        """Select the rows of this node (an output's producer may have several) without asking for anything."""
        self.tree.clearSelection()
        for item in self._items():
            if name is not None and item.data(0, NODE_ROLE) == name:
                item.setSelected(True)
                self.tree.scrollToItem(item)

    def _items(self) -> list[QTreeWidgetItem]:
        return [item for group in top_level_items(self.tree) for item in child_items(group)]

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        node = item.data(0, NODE_ROLE)
        if node:
            self.node_requested.emit(node)
