"""The symbols panel: each symbolic dimension (pt2_viewer.core.graph.summary.symbol_rows) with its range, backed or
unbacked, the input dim it stands for, its example value and the runtime asserts that bound it.

Clicking a symbol highlights the nodes of the graph shown whose shapes use it (`nodes_highlighted`). When a node is
selected elsewhere, the symbols its shapes use are shown in bold.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTreeWidgetItem, QVBoxLayout, QWidget

from pt2_viewer.app.panels import fixed_font, make_table
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.app.qt import top_level_items
from pt2_viewer.core.graph.details import symbol_label
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.graph.summary import SymbolRow, symbol_rows
from pt2_viewer.core.util.words import plural

COLUMNS = ["symbol", "range", "kind", "stands for", "example", "asserts", "nodes"]
ROW_ROLE = Qt.ItemDataRole.UserRole


class SymbolsPanel(Panel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[SymbolRow] = []
        self.dim_names: dict[str, str] = {}  # "x.shape[0]" -> "batch": the script's own Dim names (set_dim_names)
        self.context: ProgramContext | None = None
        self.empty = QLabel("This program has no symbolic dimensions: every shape is static.")
        self.empty.setWordWrap(True)
        self.tree = make_table(COLUMNS, stretch_column=5)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty)
        layout.addWidget(self.tree, 1)

    def set_dim_names(self, names: dict[str, str]) -> None:
        """The names a script gave its dims (core/export/dim_names.py), shown beside the symbols they became."""
        self.dim_names = dict(names)
        if self.context is not None:
            self.set_context(self.context)

    def named(self, row: SymbolRow) -> str:
        """`batch (s77)` where the script named the dim the symbol stands for (its name first, as the shapes show
        it), else `s77`."""
        return symbol_label(row.name, row.sources, self.dim_names)

    def set_context(self, context: ProgramContext) -> None:
        self.context = context
        program, index = context.program, context.index
        self.rows = symbol_rows(program, index)
        self.tree.clear()
        mono = fixed_font()
        for row in self.rows:
            item = QTreeWidgetItem([
                self.named(row), row.range_text, "unbacked" if row.unbacked else "backed",
                ", ".join(row.sources) or "—",
                "" if row.hint is None else str(row.hint), "; ".join(row.asserts), str(len(row.nodes)),
            ])
            item.setData(0, ROW_ROLE, row)
            for col in (0, 1, 3, 4, 5):
                item.setFont(col, mono)
            item.setTextAlignment(6, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(0, f"Click to highlight the {plural(len(row.nodes), 'node')} whose shapes use {row.name}")
            item.setToolTip(5, "\n".join(row.asserts) or "no runtime assert mentions it")
            self.tree.addTopLevelItem(item)
        self.empty.setVisible(not self.rows)
        self.tree.setVisible(bool(self.rows))

    def show_node(self, name: str | None) -> None:
        for item in top_level_items(self.tree):
            row: SymbolRow = item.data(0, ROW_ROLE)
            font = item.font(0)
            font.setBold(name is not None and name in row.nodes)
            item.setFont(0, font)

    def highlight_symbol(self, name: str, stands_for: str | None = None) -> bool:
        """Select the row of symbol `name` (or of the symbol that stands for `stands_for`, e.g. `x.shape[0]`: export
        may have renamed it) and highlight its nodes, as a click on it would; False when no row matches."""
        for item in top_level_items(self.tree):
            row: SymbolRow = item.data(0, ROW_ROLE)
            if row.name == name or (stands_for is not None and stands_for in row.sources):
                self.tree.setCurrentItem(item)
                self._clicked(item)
                return True
        return False

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        row: SymbolRow = item.data(0, ROW_ROLE)
        self.nodes_highlighted.emit(list(row.nodes))
