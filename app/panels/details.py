"""The details panel: everything about the selected node, as `core.details.node_details` lays it out.

Sections (Operator, Arguments, Outputs, Users, Module, Stack trace ...) are collapsible groups of aligned rows. A row
with a link is drawn as a link; clicking it asks for that node (`node_requested`), subgraph (`subgraph_requested`)
or source line (`source_requested`). Library stack frames are greyed so the user's own frame, listed first, stands
out.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont, QResizeEvent
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidgetItem, QVBoxLayout, QWidget

from app import theme
from app.panels import fixed_font, link_color, make_table, muted_color
from core.details import DetailRow, Link, NodeDetails, NodeLink, SourceLink, SubgraphLink, node_details
from core.graph_index import GraphIndex
from core.program import Graph, Program

LINK_ROLE = Qt.ItemDataRole.UserRole
VALUE_SHARE = 0.55  # of the panel's width, at most, for the value column


class DetailsPanel(QWidget):
    node_requested = Signal(str)
    subgraph_requested = Signal(str, str)
    source_requested = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.program: Program | None = None
        self.graph: Graph | None = None
        self.index: GraphIndex | None = None
        self.details: NodeDetails | None = None
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setWordWrap(True)
        self.tree = make_table(["", "", ""], stretch_column=2)
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(True)
        self.tree.setAlternatingRowColors(False)
        self.tree.setUniformRowHeights(False)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.tree, 1)
        self.show_node(None)

    def set_program(self, program: Program, graph: Graph, index: GraphIndex) -> None:
        self.program, self.graph, self.index = program, graph, index
        keep = self.details.name if self.details and self.details.name in graph.node_by_name else None
        self.show_node(keep)

    def show_node(self, name: str | None) -> None:
        self.tree.clear()
        if name is None or self.program is None or self.graph is None or name not in self.graph.node_by_name:
            self.details = None
            self.title.setText("<span style='color:gray'>Select a node to see its details.</span>")
            self.tree.setVisible(False)
            return
        self.tree.setVisible(True)
        self.details = node_details(self.program, self.graph, name, self.index)
        colour = theme.kind_color(self.details.kind).name()
        self.title.setText(
            f"<span style='background:{colour}'>&nbsp;{self.details.kind}&nbsp;</span> "
            f"<b style='font-family:monospace; font-size:large'>{name}</b><br>"
            f"<span style='font-family:monospace'>{self.details.title}</span>")
        for section in self.details.sections:
            self._add_section(section.title, section.rows)
        self.tree.expandAll()
        self._fit_columns()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Values get their width up to a share of the panel (long code lines elide, the tooltip has them whole), so
        the types and classes in the last column stay in view."""
        room = int(self.tree.viewport().width() * VALUE_SHARE)
        self.tree.setColumnWidth(1, min(self.tree.sizeHintForColumn(1) + 12, max(room, 120)))

    def row_items(self, section: str) -> list[QTreeWidgetItem]:
        """The rows shown under a section title (for tests and keyboard users)."""
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top.text(0) == section:
                return [top.child(j) for j in range(top.childCount())]
        return []

    def _add_section(self, title: str, rows: list[DetailRow]) -> None:
        top = QTreeWidgetItem([title])
        bold = QFont(self.font())
        bold.setBold(True)
        top.setFont(0, bold)
        self.tree.addTopLevelItem(top)
        top.setFirstColumnSpanned(True)  # only once in the tree
        mono = fixed_font()
        for row in rows:
            item = QTreeWidgetItem([row.label, row.text, row.note])
            item.setFont(1, mono)
            item.setToolTip(1, row.text if not row.note else f"{row.text}\n{row.note}")
            item.setForeground(2, QBrush(muted_color()))
            item.setToolTip(2, row.note)
            if row.link is not None:
                item.setData(0, LINK_ROLE, row.link)
                font = QFont(mono)
                font.setUnderline(True)
                item.setFont(1, font)
                item.setForeground(1, QBrush(link_color()))
                item.setToolTip(1, f"{row.text}\n{_link_hint(row.link)}")
            if row.muted:
                for col in range(2):
                    item.setForeground(col, QBrush(muted_color()))
            top.addChild(item)

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        link = item.data(0, LINK_ROLE)
        if isinstance(link, NodeLink):
            self.node_requested.emit(link.node)
        elif isinstance(link, SubgraphLink):
            self.subgraph_requested.emit(link.hop, link.subgraph)
        elif isinstance(link, SourceLink):
            self.source_requested.emit(link.file, link.line)


def _link_hint(link: Link) -> str:
    if isinstance(link, NodeLink):
        return f"Click to select {link.node}"
    if isinstance(link, SubgraphLink):
        return f"Click to open {link.subgraph}"
    return f"Click to open {link.file} at line {link.line}"
