"""The details panel: everything about the selected node, as `pt2_viewer.core.graph.details.node_details` lays it out.

Sections (Operator, Arguments, Outputs, Users, Module, Stack trace ...) are collapsible groups of aligned rows. A row
with a link is drawn as a link; clicking it asks for that node (`node_requested`), subgraph (`subgraph_requested`)
or source line (`source_requested`), or copies a value shown cut (a hostile file's huge target) to the clipboard.
Library stack frames are greyed so the user's own frame, listed first, stands out.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QBrush, QFont, QFontMetrics, QGuiApplication, QPainter, QResizeEvent
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app import theme
from pt2_viewer.app.panels import fixed_font, link_color, make_table, muted_color
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.app.qt import child_items, top_level_items
from pt2_viewer.core.graph.details import (
    CopyLink,
    DetailRow,
    Link,
    NodeDetails,
    NodeLink,
    SourceLink,
    SubgraphLink,
    measure_sections,
    node_details,
)
from pt2_viewer.core.graph.group_details import find_group, group_details
from pt2_viewer.core.graph.ids import group_of
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.overlays import Overlay
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.graph.properties import program_properties
from pt2_viewer.core.model.program import Archive, Graph, Program

LINK_ROLE = Qt.ItemDataRole.UserRole
VALUE_SHARE = 0.7  # of the room beside the labels, at least, for values when the notes do not fit too
NOTE_CHARS = 9  # a note (a type, a class, a function) keeps at least this much when values need the room


class DetailsPanel(Panel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.program: Program | None = None
        self.graph: Graph | None = None
        self.index: GraphIndex | None = None
        self.details: NodeDetails | None = None
        self.archive: Archive | None = None
        self.measures: dict[str, Overlay] = {}  # figures per node from elsewhere (numerics error, run time)
        self.dim_names: dict[str, str] = {}  # "x.shape[0]" -> "batch": a script's own Dim names (set_dim_names)
        # the program's properties, kept while the same program is shown: a level change, or a panel filled when
        # first shown (set_context, then show_node), shows them again without counting a 10k-node graph again
        self._properties: tuple[Program, Archive | None, dict[str, str], NodeDetails] | None = None
        # what the tree shows: (node, version of what it was drawn from); a widget filling this panel calls
        # set_context and then show_node with the same node, which is drawn once
        self._version = 0
        self._shown: tuple[str | None, int] | None = None
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setWordWrap(True)
        self.tree = make_table(["", "", ""], stretch_column=2)
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(True)
        self.tree.setAlternatingRowColors(False)
        self.tree.setUniformRowHeights(False)
        self.tree.setWordWrap(True)  # a narrow panel wraps long values (code lines, shapes) instead of cutting them
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        self.tree.setItemDelegate(SpanDelegate(self.tree))
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.tree, 1)
        self.show_node(None)

    def set_context(self, context: ProgramContext) -> None:
        self._version += 1
        program, graph, index, archive = context.program, context.graph, context.index, context.archive
        self.program, self.graph, self.index, self.archive = program, graph, index, archive
        shown = self._shown[0] if self._shown else None
        keep = shown if shown in graph.node_by_name or self._group_in(shown) else None
        self.show_node(keep)

    def show_item(self, item: str | None) -> None:
        """A node's details, or a module group's (an id `group:PATH`, core/graph/ids.py): a click on a collapsed
        group shows the group, as Help > Keyboard Shortcuts says."""
        self.show_node(item)

    def _group_in(self, item: str | None) -> bool:
        path = group_of(item)
        return path is not None and self.index is not None and find_group(self.index, path) is not None

    def set_dim_names(self, names: dict[str, str]) -> None:
        """The names a script gave its dims (core/export/dim_names.py): the program's Symbols rows say `batch (s77)`."""
        self.dim_names = dict(names)
        self._version += 1
        if self.details is not None and self.details.kind == "program":
            self.show_node(None)

    def show_node(self, name: str | None) -> None:
        """Show node `name`'s details, a module group's for a group's item id, or the program's for None."""
        if self._shown == (name, self._version):
            return
        self._shown = (name, self._version)
        self.tree.clear()
        if self.program is None or self.graph is None:
            self.details = None
            self.title.setText("<span style='color:gray'>Select a node to see its details.</span>")
            self.tree.setVisible(False)
            return
        self.tree.setVisible(True)
        if self._group_in(name) and self.index is not None:
            self.details = group_details(self.graph, self.index, group_of(name) or "")
            self.title.setText(
                f"<span style='background:{theme.kind_color('other').name()}'>&nbsp;module group&nbsp;</span> "
                f"<b style='font-family:monospace; font-size:large'>{html.escape(self.details.name)}</b><br>"
                f"<span style='font-family:monospace'>{html.escape(self.details.title)}</span>")
        elif name is None or name not in self.graph.node_by_name:
            # nothing selected: the program's own properties (core/graph/properties.py)
            self.details = self._program_properties(self.program)
            self.title.setText(f"<b style='font-size:large'>{html.escape(self.details.title)}</b><br>"
                               "<span style='color:gray'>The program. Select a node to see its details.</span>")
        else:
            self.details = node_details(self.program, self.graph, name, self.index)
            colour = theme.kind_color(self.details.kind).name()
            self.title.setText(
                f"<span style='background:{colour}'>&nbsp;{self.details.kind}&nbsp;</span> "
                f"<b style='font-family:monospace; font-size:large'>{name}</b><br>"
                f"<span style='font-family:monospace'>{html.escape(self.details.title)}</span>")
        sections = list(self.details.sections)
        if name is not None and self.details.kind not in ("program", "group"):
            sections[1:1] = measure_sections(self.measures, name)  # the figures asked for, right under the op
        tops = [self._add_section(section.title, section.rows) for section in sections]
        for top in tops:  # after all are in: each call first lays out the tree anew (QTreeView::setFirstColumnSpanned)
            top.setFirstColumnSpanned(True)
        self.tree.expandAll()
        self._fit_columns()

    def _program_properties(self, program: Program) -> NodeDetails:
        kept = self._properties
        if kept is None or kept[0] is not program or kept[1] is not self.archive or kept[2] != self.dim_names:
            details = program_properties(self.archive, program, self.dim_names)
            kept = self._properties = (program, self.archive, dict(self.dim_names), details)
        return kept[3]

    def set_measure(self, name: str, overlay: Overlay | None) -> None:
        """List `overlay`'s figures for the selected node under `name` (None: no more), and show them now."""
        if overlay is None:
            self.measures.pop(name, None)
        else:
            self.measures[name] = overlay
        self._version += 1
        if self.details is not None and self.details.kind not in ("program", "group"):
            self.show_node(self.details.name)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Labels take at most a third. A row without a note (most rows) draws its value across the notes column
        too (`SpanDelegate`), so the notes column is sized for the rows that have one: their values take what they
        need when their notes still fit beside them; otherwise values get most of the room and wrap, and notes
        shrink to `NOTE_CHARS` (each is whole in its tooltip). So no value is cut to "3.6 …" beside an empty note."""
        view = self.tree.viewport().width()
        self.tree.setColumnWidth(0, min(self.tree.sizeHintForColumn(0) + 8, max(view // 3, 90)))
        rest = max(view - self.tree.columnWidth(0), 1)  # never past the panel: a cut value gets "…", not the edge
        noted = [r for s in self.details.sections for r in s.rows if r.note] if self.details is not None else []
        if not noted:
            self.tree.setColumnWidth(1, rest)
        else:
            metrics = QFontMetrics(fixed_font())
            value = max(metrics.horizontalAdvance(r.text) for r in noted) + 16
            note = max(self.tree.fontMetrics().horizontalAdvance(r.note) for r in noted) + 16
            floor = min(note, self.tree.fontMetrics().horizontalAdvance("x" * NOTE_CHARS))
            width = value if value + floor <= rest else max(int(rest * VALUE_SHARE), rest - floor)
            self.tree.setColumnWidth(1, min(width, rest))
        self.tree.doItemsLayout()  # wrapped rows get their new heights

    def row_items(self, section: str) -> list[QTreeWidgetItem]:
        """The rows shown under a section title (for tests and keyboard users)."""
        for top in top_level_items(self.tree):
            if top.text(0) == section:
                return child_items(top)
        return []

    def _add_section(self, title: str, rows: list[DetailRow]) -> QTreeWidgetItem:
        """A section's title and rows added to the tree; the title is to span every column once all are in."""
        top = QTreeWidgetItem([title])
        bold = QFont(self.font())
        bold.setBold(True)
        top.setFont(0, bold)
        self.tree.addTopLevelItem(top)
        mono = fixed_font()
        for row in rows:
            item = QTreeWidgetItem([row.label, row.text, row.note])
            item.setToolTip(0, row.label)
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
        return top

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        link = item.data(0, LINK_ROLE)
        if isinstance(link, NodeLink):
            self.node_requested.emit(link.node)
        elif isinstance(link, SubgraphLink):
            self.subgraph_requested.emit(link.hop, link.subgraph)
        elif isinstance(link, SourceLink):
            self.source_requested.emit(link.file, link.line)
        elif isinstance(link, CopyLink):
            QGuiApplication.clipboard().setText(link.text)
            item.setText(2, f"copied, {len(link.text):,} characters")


class SpanDelegate(QStyledItemDelegate):
    """Draws a value whose row has no note across the notes column as well (a tree spans only whole rows, Qt's
    `setFirstColumnSpanned`); the empty note cell draws nothing over it."""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self.tree = tree

    def _spans(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        note = index.model().index(index.row(), 2, index.parent())
        return index.column() in (1, 2) and not note.data() and index.parent().isValid()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        if self._spans(index):
            if index.column() == 2:
                return  # drawn by the value's cell
            option = QStyleOptionViewItem(option)
            option.rect = option.rect.adjusted(0, 0, self.tree.columnWidth(2), 0)
        super().paint(painter, option, index)

    def sizeHint(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt's name)
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        """A value's height at the width it is drawn (with the note cell's when it spans): the tree asks with no
        width, and a long code line was then cut to "x = …" instead of wrapping."""
        if index.column() == 2 and self._spans(index):
            return QSize(0, 0)
        if index.column() == 1:
            option = QStyleOptionViewItem(option)
            width = self.tree.columnWidth(1) + (self.tree.columnWidth(2) if self._spans(index) else 0)
            rect = option.rect
            option.rect = QRect(rect.x(), rect.y(), width, rect.height())
        return super().sizeHint(option, index)


def _link_hint(link: Link) -> str:
    if isinstance(link, NodeLink):
        return f"Click to select {link.node}"
    if isinstance(link, SubgraphLink):
        return f"Click to open {link.subgraph}"
    if isinstance(link, CopyLink):
        return f"Click to copy all {len(link.text):,} characters"
    return f"Click to open {link.file} at line {link.line}"
