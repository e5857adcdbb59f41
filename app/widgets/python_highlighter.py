"""Python syntax colours for the source view and the code panel: Pygments' Python lexer behind a QSyntaxHighlighter.

Qt highlights one block (line) at a time; Pygments lexes a whole text. So the highlighter lexes the whole document
when a block's text is not the one it lexed last, keeps each line's spans, and colours a block from them. A block's
state says whether the line ends inside a token that runs on (a triple-quoted string), so that after an edit that
opens or closes one Qt goes on re-colouring the lines below. Colours come from app/theme.py (`code_color`), for the
light or dark palette read when the highlighter is made.
"""
from __future__ import annotations

import re

from pygments.lexer import Lexer
from pygments.lexers.python import PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, String, _TokenType
from PySide6.QtGui import QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from pt2_viewer.app import theme

# Pygments token types to our styles, most specific first (a Name.Builtin is a builtin, not a plain name).
_STYLES: tuple[tuple[_TokenType, str], ...] = (
    (Comment, "comment"),
    (String, "string"),
    (Number, "number"),
    (Keyword, "keyword"),
    (Operator.Word, "keyword"),  # and, or, not, in, is
    (Name.Builtin, "builtin"),  # Name.Builtin.Pseudo too: self, cls
    (Name.Decorator, "decorator"),
    (Name.Function, "name"),  # the name a def defines (and magic methods)
    (Name.Class, "name"),
)
_TORCH_OP = re.compile(r"\btorch\.ops\.[\w.]+")  # one token for the reader, five for Pygments

_PLAIN, _RUNS_ON = 0, 1  # block states: the line ends outside any token, or inside one that continues below

Span = tuple[int, int, str]  # start and length within the line, style


def _style(token: _TokenType) -> str | None:
    return next((style for kind, style in _STYLES if token in kind), None)


def python_spans(text: str, lexer: Lexer | None = None) -> tuple[list[list[Span]], list[bool]]:
    """Per line of `text`: the styled spans, and whether the line ends inside a token that goes on to the next (its
    newline is styled: Pygments makes the newline inside a triple-quoted string a string token of its own)."""
    lines = text.split("\n")
    starts = [0]
    for text_line in lines[:-1]:
        starts.append(starts[-1] + len(text_line) + 1)
    spans: list[list[Span]] = [[] for _ in lines]
    runs_on = [False] * len(lines)
    line = 0
    lexer = lexer or PythonLexer(stripnl=False, ensurenl=False)  # another language's (the C++ of an AOTI package)
    for pos, token, value in lexer.get_tokens_unprocessed(text):
        style = _style(token)
        end = pos + len(value)
        while line + 1 < len(lines) and starts[line + 1] <= pos:
            line += 1
        if style is None:
            continue
        k = line
        while k < len(lines):  # a token over several lines: one span per line
            newline = starts[k] + len(lines[k])
            start, stop = max(pos, starts[k]), min(end, newline)
            if stop > start:
                spans[k].append((start - starts[k], stop - start, style))
            if end <= newline:
                break
            runs_on[k] = True  # the token takes this line's newline: it goes on below (an open triple-quoted string)
            k += 1
    return spans, runs_on


class PythonHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, dark: bool | None = None, lexer: Lexer | None = None) -> None:
        super().__init__(document)
        self.lexer = lexer
        self.formats: dict[str, QTextCharFormat] = {}
        for style in theme.CODE_STYLES:
            fmt = QTextCharFormat()
            fmt.setForeground(theme.code_color(style, dark))
            if style in ("keyword", "name"):
                fmt.setFontWeight(QFont.Weight.Bold)
            if style == "comment":
                fmt.setFontItalic(True)
            self.formats[style] = fmt
        self._lines: list[str] = []
        self._spans: list[list[Span]] = []
        self._runs_on: list[bool] = []

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt's name)
        number = self.currentBlock().blockNumber()
        if number >= len(self._lines) or self._lines[number] != text or len(self._lines) != self._block_count():
            self._lex()
        if number >= len(self._spans):
            return
        for m in _TORCH_OP.finditer(text):
            self.setFormat(m.start(), m.end() - m.start(), self.formats["torch"])
        for start, length, style in self._spans[number]:  # after: in a string or comment it is not an op
            self.setFormat(start, length, self.formats[style])
        self.setCurrentBlockState(_RUNS_ON if self._runs_on[number] else _PLAIN)

    def _block_count(self) -> int:
        document = self.document()
        return document.blockCount() if document is not None else 0

    def _lex(self) -> None:
        document = self.document()
        text = document.toPlainText() if document is not None else ""
        self._lines = text.split("\n")
        self._spans, self._runs_on = python_spans(text, self.lexer)
