"""A generated source file, read only: highlighted (C++, Python or JSON, by Pygments), with a find bar that marks
every match and steps through them. AOTInductor's wrapper and kernels are long; finding a kernel's name or a
constant is what a reader does first. A caller may mark lines too (`mark_lines`: the trace view's kernel picked),
beside the find bar's matches."""
from __future__ import annotations

from pygments.lexers.c_cpp import CppLexer
from pygments.lexers.data import JsonLexer
from pygments.lexers.python import PythonLexer
from PySide6.QtGui import QColor, QFontDatabase, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.widgets.python_highlighter import PythonHighlighter

MATCH = QColor("#ffe082")
MARKED_LINE = QColor("#d7e8fb")
MAX_MARKED_LINES = 5_000  # of one span
MAX_HIGHLIGHTED = 2 * 1024 * 1024  # characters; a bigger file (a huge model's wrapper) is shown plain, at once
_LEXERS = {"cpp": CppLexer, "python": PythonLexer, "json": JsonLexer}


class CodeView(QWidget):
    # The find box. Its name is QWidget.find's, a static lookup by window id that nothing here calls.
    find: QLineEdit  # type: ignore[assignment]

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.editor = QPlainTextEdit()
        self.editor.setReadOnly(True)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.highlighter: PythonHighlighter | None = None
        self.line_marks: list[QTextEdit.ExtraSelection] = []
        self.found = 0
        self.find = QLineEdit()
        self.find.setPlaceholderText("Find in this file (Enter: next)")
        self.find.setClearButtonEnabled(True)
        self.count = QLabel()
        self.count.setMinimumWidth(90)
        previous, following = QPushButton("▲"), QPushButton("▼")
        previous.setToolTip("Previous match")
        following.setToolTip("Next match")
        previous.clicked.connect(lambda: self.step(backward=True))
        following.clicked.connect(lambda: self.step())
        self.find.textChanged.connect(self._mark_all)
        self.find.returnPressed.connect(lambda: self.step())
        bar = QHBoxLayout()
        bar.addWidget(self.find, 1)
        bar.addWidget(self.count)
        bar.addWidget(previous)
        bar.addWidget(following)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(bar)
        layout.addWidget(self.editor, 1)

    def show_text(self, title: str, text: str, language: str) -> None:
        self.title.setText(title)
        if self.highlighter is not None:
            self.highlighter.setDocument(None)
            self.highlighter = None
        lexer = _LEXERS.get(language)
        self.line_marks = []
        self.editor.setPlainText(text)
        if lexer is not None and len(text) <= MAX_HIGHLIGHTED:
            self.highlighter = PythonHighlighter(self.editor.document(), lexer=lexer(stripnl=False, ensurenl=False))
            self.highlighter.rehighlight()  # now, not at the next turn of the event loop: the text is shown coloured
        self._mark_all()

    def go_to_line(self, line: int) -> None:
        """Put the cursor on 1-based `line`, centred."""
        block = self.editor.document().findBlockByNumber(max(0, line - 1))
        self.editor.setTextCursor(QTextCursor(block))
        self.editor.centerCursor()

    def matches(self) -> int:
        return self.found

    def mark_lines(self, spans: list[tuple[int, int]]) -> None:
        """Shade each span of 1-based lines, first to last, whole width (none: []); the find bar's matches stay."""
        document = self.editor.document()
        self.line_marks = []
        for first, last in spans:
            for line in range(max(1, first), min(last, first + MAX_MARKED_LINES) + 1):
                mark = QTextEdit.ExtraSelection()  # one a line: a selection over several is shaded full width once
                mark.format.setBackground(MARKED_LINE)
                mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                mark.cursor = QTextCursor(document.findBlockByNumber(line - 1))
                self.line_marks.append(mark)
        self._mark_all()

    def _mark_all(self) -> None:
        needle = self.find.text()
        marks: list[QTextEdit.ExtraSelection] = []
        if needle:
            document = self.editor.document()
            cursor = document.find(needle, 0)
            while not cursor.isNull() and len(marks) < 10_000:
                mark = QTextEdit.ExtraSelection()
                mark.format.setBackground(MATCH)
                mark.cursor = cursor
                marks.append(mark)
                cursor = document.find(needle, cursor)
        self.found = len(marks)
        self.editor.setExtraSelections(self.line_marks + marks)
        self.count.setText(f"{len(marks):,} match{'es' if len(marks) != 1 else ''}" if needle else "")

    def step(self, backward: bool = False) -> bool:
        """Move to the next (or previous) match, wrapping round; False when there is none."""
        needle = self.find.text()
        if not needle:
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if self.editor.find(needle, flags):
            return True
        self.editor.moveCursor(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        return self.editor.find(needle, flags)
