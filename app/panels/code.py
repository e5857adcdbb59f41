"""The code panel: the graph shown as readable Python (core/graph/readable.py), its selection following the graph's.

Moving the cursor onto a line (click or arrow keys) asks for that line's node; a selection made elsewhere moves the
cursor to the node's line and marks it, without asking back. Highlighting is skipped for very long programs, where
colouring every line would stall the window.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.panels import fixed_font
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.graph.readable import ReadableCode, readable_code

if TYPE_CHECKING:  # pygments is imported when the Code tab is first filled, not when a program opens
    from pt2_viewer.app.widgets.python_highlighter import PythonHighlighter

HIGHLIGHT_MAX_LINES = 20000


class CodePanel(Panel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.code = ReadableCode("")
        self.node: str | None = None
        self._following = False  # True while the cursor moves because of show_node
        self.editor = QPlainTextEdit()
        self.editor.setReadOnly(True)
        self.editor.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                            | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setFont(fixed_font())
        self.highlighter: PythonHighlighter | None = None
        self.editor.cursorPositionChanged.connect(self._cursor_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor)

    def set_context(self, context: ProgramContext) -> None:
        program, graph = context.program, context.graph
        self.code = readable_code(graph if graph is not program.graph else program)
        self._following = True
        if self.highlighter is not None:
            self.highlighter.setDocument(None)
            self.highlighter = None
        self.editor.setPlainText(self.code.text)
        if self.code.text.count("\n") < HIGHLIGHT_MAX_LINES:
            from pt2_viewer.app.widgets.python_highlighter import PythonHighlighter
            self.highlighter = PythonHighlighter(self.editor.document())
        self._following = False
        self.show_node(self.node if self.node in self.code.line_of_node else None)

    def show_node(self, name: str | None) -> None:
        self.node = name
        line = self.code.line_of_node.get(name) if name is not None else None
        if name is None or line is None:
            self.editor.setExtraSelections([])
            return
        self._following = True
        cursor = QTextCursor(self.editor.document().findBlockByNumber(line))
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()
        self._following = False
        self._mark(name)

    def cursor_line(self) -> int:
        """The 0-based line the cursor is on."""
        return self.editor.textCursor().blockNumber()

    def _cursor_moved(self) -> None:
        if self._following:
            return
        node = self.code.node_of_line.get(self.cursor_line())
        if node is None or node == self.node:
            return
        self.node = node
        self._mark(node)
        self.node_requested.emit(node)

    def _mark(self, node: str) -> None:
        """Shade every line that belongs to the node."""
        colour = QColor(theme.HIGHLIGHT)
        colour.setAlpha(50 if not theme.is_dark() else 90)
        marks = []
        doc = self.editor.document()
        for line, owner in self.code.node_of_line.items():
            if owner != node:
                continue
            mark = QTextEdit.ExtraSelection()
            mark.format.setBackground(colour)
            mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            mark.cursor = QTextCursor(doc.findBlockByNumber(line))
            marks.append(mark)
        self.editor.setExtraSelections(marks)
