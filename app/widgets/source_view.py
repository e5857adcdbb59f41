"""A read-only, syntax-highlighted view of the user's source file at the line a stack frame names.

The details panel emits `source_requested(file, line)` when a stack frame is clicked; `open_source(file, line,
parent)` shows that file in one reusable window per parent, scrolled to the line and marking it. Archives often come
from another machine, so a file that is not here (or is torch's generated `<eval_with_key>` code) gets a message that
says so instead of an error dialog.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

from pt2_viewer.app import theme
from pt2_viewer.app.widgets.python_highlighter import PythonHighlighter
from pt2_viewer.core.platform.editor import open_in_editor
from pt2_viewer.core.util.words import format_bytes

MAX_SOURCE_BYTES = 8 * 1024 * 1024
LINE_MARK = {False: QColor("#fff3c4"), True: QColor("#4d4420")}  # by dark palette
WINDOW_NAME = "pt2v-source-view"


def read_source(file: str) -> tuple[str | None, str]:
    """(text, "") for a readable text file, else (None, a message saying why and what to do)."""
    if file.startswith("<"):
        return None, (f"'{file}' is code torch generated while tracing; it has no file on disk. "
                      "The user's own frame is listed first in the stack trace.")
    path = Path(file)
    try:
        if not path.exists():
            return None, (f"'{file}' is not on this machine. The program was probably exported on another machine "
                          "or the file has moved; the stack trace still shows the line's code.")
        if not path.is_file():
            return None, f"'{file}' is not a regular file, so it cannot be shown."
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return None, f"'{file}' is larger than {format_bytes(MAX_SOURCE_BYTES)}; open it in an editor."
        return path.read_text(encoding="utf-8", errors="replace"), ""
    except OSError as e:
        return None, f"'{file}' cannot be read ({e.strerror or e}). Check its permissions."


class SourceView(QWidget):
    """A file at a line: a header naming it, the text read-only and highlighted, the line marked and centred."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.file = ""
        self.line = 0
        self.header = QLabel()
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        self.editor = QPlainTextEdit()
        self.editor.setReadOnly(True)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.highlighter = PythonHighlighter(self.editor.document())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.message)
        layout.addWidget(self.editor, 1)
        self.resize(820, 560)

    def open_source(self, file: str, line: int) -> bool:
        """Show `file` at 1-based `line`; False (with the reason shown) when the file cannot be shown."""
        self.file, self.line = file, line
        self.setWindowTitle(f"{Path(file).name}:{line}")
        self.header.setText(f"<b>{Path(file).name}</b> &nbsp; line {line} &nbsp; <span style='color:gray'>"
                            f"{file}</span>")
        text, problem = read_source(file)
        self.message.setText(problem)
        self.message.setVisible(text is None)
        self.editor.setVisible(text is not None)
        if text is None:
            self.editor.clear()
            return False
        self.editor.setPlainText(text)
        self._go_to(line)
        return True

    def current_line(self) -> int:
        """The 1-based line the cursor is on."""
        return self.editor.textCursor().blockNumber() + 1

    def _go_to(self, line: int) -> None:
        block = self.editor.document().findBlockByNumber(max(0, line - 1))
        cursor = QTextCursor(block)
        self.editor.setTextCursor(cursor)
        mark = QTextEdit.ExtraSelection()
        mark.format.setBackground(LINE_MARK[theme.is_dark()])
        mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        mark.cursor = cursor
        self.editor.setExtraSelections([mark])
        self.editor.centerCursor()


def open_source(file: str, line: int, parent: QWidget | None = None) -> SourceView | None:
    """Open `file` at `line` in the editor chosen in Preferences (app/widgets/editor_choice.py; None returned), else
    show it in the parent's source window (made on first use), raised to the front."""
    from pt2_viewer.app.widgets.editor_choice import chosen_editor  # deferred: a Qt dialog, when first asked

    if open_in_editor(chosen_editor(), file, line):
        return None
    view = parent.findChild(SourceView, WINDOW_NAME) if parent is not None else None
    if view is None:
        view = SourceView(parent)
        view.setObjectName(WINDOW_NAME)
        view.setWindowFlag(Qt.WindowType.Window, True)
    view.open_source(file, line)
    view.show()
    view.raise_()
    view.activateWindow()
    return view
