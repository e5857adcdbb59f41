"""The Explanation tab of a script: why a call failed (or what a call or run produced): its kind, the user's line
(a link that opens it), the key message, a hint, the suggested `dynamic_shapes` fix with a button that applies it,
and the full traceback on demand."""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.panels import fixed_font
from pt2_viewer.app.qt import tool_button
from pt2_viewer.core.export.failures import SourceLine, plain_sentence
from pt2_viewer.core.export.plain_words import user_words
from pt2_viewer.core.export.script_session import (
    ExportEntry,
    fix_lines,
    program_facts,
)

TRACEBACK_SHOW, TRACEBACK_HIDE = "Show full traceback", "Hide full traceback"
MESSAGE_SHOW, MESSAGE_HIDE = "Show torch's message", "Hide torch's message"


def _link(line: SourceLine) -> str:
    where = f"{Path(line.file).name}:{line.line}" + (f" in {line.function}" if line.function else "")
    code = f"<br><code>{html.escape(line.code)}</code>" if line.code else ""
    return f"<a href='source'>{html.escape(where)}</a>{code}"


class Explanation(QWidget):
    """Why a call failed (or what a call or run produced): kind, user line, message, hint, fix, traceback."""

    source_requested = Signal(str, int)
    apply_fix_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._line: SourceLine | None = None
        self._labels = (TRACEBACK_SHOW, TRACEBACK_HIDE)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.sentence = QLabel()  # a failure's one plain sentence, before its line and torch's message
        self.sentence.setWordWrap(True)
        self.where = QLabel()
        self.where.setTextFormat(Qt.TextFormat.RichText)
        self.where.linkActivated.connect(self._open_line)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setFont(fixed_font())
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.fix = QLabel()
        self.fix.setFont(fixed_font())
        self.fix.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.apply_fix = QPushButton("Try it: re-export with this change (the file stays as it is)")
        self.apply_fix.clicked.connect(self.apply_fix_requested)
        self.show_traceback = tool_button(TRACEBACK_SHOW, checkable=True)
        self.show_traceback.toggled.connect(self._toggle_traceback)
        self.traceback = QPlainTextEdit(readOnly=True)
        self.traceback.setFont(fixed_font())
        self.traceback.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.traceback.setVisible(False)
        self.fix_box = QGroupBox("Suggested change to dynamic_shapes")
        fix_layout = QVBoxLayout(self.fix_box)
        fix_layout.addWidget(self.fix)
        fix_layout.addWidget(self.apply_fix, 0, Qt.AlignmentFlag.AlignLeft)
        body = QWidget()
        layout = QVBoxLayout(body)
        for w in (self.title, self.sentence, self.where, self.message, self.hint, self.fix_box):
            layout.addWidget(w)
        layout.addWidget(self.show_traceback, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.traceback, 1)
        layout.addStretch(0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.show_text("Select an export call.")

    def show_text(self, title: str, message: str = "", hint: str = "", line: SourceLine | None = None,
                  traceback: str = "") -> None:
        self._line = line
        self._labels = (TRACEBACK_SHOW, TRACEBACK_HIDE)
        self.title.setText(f"<b>{html.escape(title)}</b>")
        self.sentence.setVisible(False)
        self.where.setText(f"Your line: {_link(line)}" if line else "")
        self.where.setVisible(line is not None)
        self.message.setText(message)
        self.message.setVisible(bool(message))
        self.hint.setText(f"<i>Hint:</i> {html.escape(hint)}" if hint else "")
        self.hint.setVisible(bool(hint))
        self.fix_box.setVisible(False)
        self.traceback.setPlainText(traceback)
        self.show_traceback.setChecked(False)
        self.show_traceback.setVisible(bool(traceback))

    def show_entry(self, entry: ExportEntry, fixed: dict | None) -> None:
        failure = entry.failure
        mode = "strict" if entry.strict else "non-strict"
        if failure is None:
            if entry.ok:
                self.show_text(f"{entry.title} exported ({mode}, {entry.duration_s:.2f} s)",
                               "\n".join(program_facts(entry.program)),
                               "" if entry.pt2 else f"The program could not be saved: {entry.save_error}",
                               entry.line)
            else:
                self.show_text(f"{entry.title}: {entry.summary}", user_words(entry.message, entry.names),
                               line=entry.line)
            return
        # one plain sentence and the user's line lead; torch's message (with its TORCH_LOGS / TORCHDYNAMO_* hints
        # and links) and the traceback wait behind "Show torch's message"
        self.show_text(f"{entry.title} failed ({mode}): {failure.title}", "", failure.hint,
                       failure.user_line or entry.line, failure.traceback or failure.message)
        self._labels = (MESSAGE_SHOW, MESSAGE_HIDE)
        self.show_traceback.setText(MESSAGE_SHOW)
        said = entry.headline
        self.sentence.setText(plain_sentence(failure) + ("" if said == plain_sentence(failure) else f"\n{said}"))
        self.sentence.setVisible(True)
        if failure.suggested_fixes_text or fixed is not None:
            self.fix.setText("\n".join(fix_lines(failure.suggested_fixes_text, entry.spec, fixed)))
            self.apply_fix.setEnabled(fixed is not None)
            self.fix_box.setVisible(True)

    def _open_line(self, _href: str) -> None:
        if self._line is not None:
            self.source_requested.emit(self._line.file, self._line.line)

    def _toggle_traceback(self, on: bool) -> None:
        self.traceback.setVisible(on)
        self.show_traceback.setText(self._labels[1] if on else self._labels[0])
