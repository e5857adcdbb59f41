"""Find in one document's graph: the box, its result list, and going through the matches with Enter, F3 and
Shift+F3 (the step bar's previous and next, app/graph/tools.py).

How a pattern is read (a regex, or as written for a type or shape copied from a node) is core/graph/find_pattern.py's.
The list and the step bar always show the same match: F3 moves the list's row, a click on a row moves the bar. F3
right after typing searches at once (the box waits a moment after each key otherwise) and goes to the first match.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLineEdit, QListWidget, QListWidgetItem

from pt2_viewer.app.document.tools import GraphTools
from pt2_viewer.app.panels import fit_rows
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.graph.find_pattern import Reading, find_label, find_status, find_tip, search
from pt2_viewer.core.graph.navigation import Hits

MAX_ROWS = 2000
TYPING_MS = 200  # the search runs this long after the last key


class FindBar(QObject):
    """Given the document's model, its graph's tools (which go through the matches) and its status line."""

    def __init__(self, model: DocumentModel, tools: GraphTools, status: Callable[[str], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model, self.tools, self.status = model, tools, status
        self.box = QLineEdit(placeholderText="Find (regex over names, ops, modules)  Ctrl+F")
        self.box.setClearButtonEnabled(True)
        self.results = QListWidget()
        self.results.setVisible(False)
        self.reading = Reading("")
        self.hits: Hits | None = None  # the tools' hits while they are this bar's matches
        self._timer = QTimer(self, singleShot=True, interval=TYPING_MS)
        self._timer.timeout.connect(self.run)
        self.box.textChanged.connect(lambda _t: self._timer.start())
        self.box.returnPressed.connect(lambda: self.tools.move_hit(1))
        self.results.itemActivated.connect(lambda it: self.go_to(self.results.row(it)))
        self.results.itemClicked.connect(lambda it: self.go_to(self.results.row(it)))
        QShortcut(QKeySequence("Escape"), self.box, lambda: self.box.clear())
        tools.before_move = self.step
        tools.hit_moved.connect(self.moved)

    def run(self) -> None:
        """Search the current level for the box's pattern: the matches marked, listed with op and module, counted in
        the status line; going through earlier matches ends."""
        self._timer.stop()
        model = self.model
        text = self.box.text().strip()
        hits, self.reading = search(model.level.index, text)
        model.matches = [h.node for h in hits]
        self.results.clear()
        for h in hits[:MAX_ROWS]:
            it = QListWidgetItem(model.level.index.hit_text(h))  # the node, its op and module
            it.setData(Qt.ItemDataRole.UserRole, h.node)
            self.results.addItem(it)
        self.results.setVisible(bool(text))
        fit_rows(self.results, 8)  # as tall as its matches
        self.box.setToolTip(find_tip(self.reading))  # searched as written: said, not pink
        self.status(find_status(self.reading, len(hits)) if text else "")
        self.tools.go_through([])

    def step(self, by: int) -> bool:
        """Before the tools move to the next (+1) or previous (-1) hit (Enter, F3, Shift+F3): search first if the box
        changed since, and go to the first (or last) match if none is shown yet. True when that was the move; False
        leaves it to the tools (this bar's matches being gone through, or another's nodes)."""
        if self._timer.isActive():
            self.run()
        if self.tools.hits is not None or not self.model.matches or not self.results.count():
            return False  # the tools move through what they hold (this bar's matches: then they tell `moved`)
        return self.go_to(0 if by > 0 else self.results.count() - 1)

    def go_to(self, row: int) -> bool:
        """Reveal and zoom to match `row`, with previous/next through the others (app/graph/tools.py)."""
        tools = self.tools
        tools.go_through(self.model.matches[:self.results.count()], find_label(self.reading), row)
        self.hits = tools.hits
        self.moved()
        return True

    def moved(self) -> None:
        """The tools moved through the hits: while they are this bar's, the list's row is the match shown."""
        hits = self.tools.hits
        if hits is not None and hits is self.hits and hits.at >= 0:
            self.results.blockSignals(True)
            self.results.setCurrentRow(hits.at)
            self.results.blockSignals(False)
