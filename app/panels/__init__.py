"""The side panels of a document: each a view of one core model, with no logic in the widget.

Every panel is a `Panel` (app/panels/panel.py), the one interface the document widget (app/graph/document.py)
relies on:
  - `set_context(ProgramContext)`: the program, the graph now shown (the top graph or a HOP subgraph), that graph's
    GraphIndex and the archive (`set_program(program, graph, index, archive=None)` for callers holding the parts);
  - `show_node(name | None)`: the selection changed elsewhere; reflect it without emitting anything (`show_item`
    is given the selection's item id: the node's, or a module group's, which Details shows and the others take as none);
  - signals, emitted only for what the user did in the panel: `node_requested(str)`, `nodes_highlighted(list)`,
    `subgraph_requested(str, str)` (HOP node, subgraph name), `source_requested(str, int)` (file, 1-based line).

The data each panel shows comes from core: core/graph/details.py, core/graph/readable.py, core/graph/summary.py. This
module holds only the few looks the panels share.
"""
from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QComboBox, QHeaderView, QListWidget, QTreeWidget


def fixed_font() -> QFont:
    """The system's monospace font, for names, shapes and code."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def link_color() -> QColor:
    return QGuiApplication.palette().color(QPalette.ColorRole.Link)


def muted_color() -> QColor:
    return QGuiApplication.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)


def make_table(headers: list[str], stretch_column: int) -> QTreeWidget:
    """A flat, sortable-looking tree used as a table: aligned columns, alternating rows, one stretching column."""
    tree = QTreeWidget()
    tree.setHeaderLabels(headers)
    tree.setAlternatingRowColors(True)
    tree.setUniformRowHeights(True)
    tree.setRootIsDecorated(False)
    tree.setAllColumnsShowFocus(True)
    header = tree.header()
    header.setStretchLastSection(False)
    for i in range(len(headers)):
        mode = QHeaderView.ResizeMode.Stretch if i == stretch_column else QHeaderView.ResizeMode.ResizeToContents
        header.setSectionResizeMode(i, mode)
    return tree


def fit_rows(view: QListWidget, most: int = 12) -> None:
    """A list as tall as its rows, up to `most` (Run's hottest nodes all on screen, not two of them; Find's results
    one row high for one match, not 160 px)."""
    rows = max(1, min(view.count(), most))
    row = view.sizeHintForRow(0) if view.count() else view.fontMetrics().height() + 4
    view.setFixedHeight(rows * row + 2 * view.frameWidth() + 4)


def narrow_combo(chars: int = 18) -> QComboBox:
    """A combo box that asks for `chars` characters of width, not its longest choice's: a side panel at 1280x800
    is narrower than "Sample inputs when saved, else generated", and the panel was cut at its right edge."""
    box = QComboBox()
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(chars)
    return box
