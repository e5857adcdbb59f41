"""Python syntax colours for the source view and the code panel.

A small QSyntaxHighlighter: keywords, builtins, `def`/`class` names, decorators, numbers, comments and strings
(triple-quoted ones may span lines, tracked in the block state). The colours are chosen for the light and dark
palettes alike by reading the palette when the highlighter is made.
"""
from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from pt2_viewer.app import theme

_LIGHT = {"keyword": "#0033b3", "builtin": "#8a3aa8", "name": "#00627a", "decorator": "#9e880d",
          "number": "#1750eb", "string": "#067d17", "comment": "#8c8c8c", "torch": "#871094"}
_DARK = {"keyword": "#cf8e6d", "builtin": "#c77dbb", "name": "#56a8f5", "decorator": "#b3ae60",
         "number": "#2aacb8", "string": "#6aab73", "comment": "#7a7e85", "torch": "#c77dbb"}

_STATE_NONE, _STATE_TRIPLE_SINGLE, _STATE_TRIPLE_DOUBLE = -1, 1, 2
_TRIPLE = {_STATE_TRIPLE_SINGLE: "'''", _STATE_TRIPLE_DOUBLE: '"""'}


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    style: str
    group: int = 0


_RULES = [
    _Rule(re.compile(r"\b(" + "|".join(keyword.kwlist) + r")\b"), "keyword"),
    _Rule(re.compile(r"\b(" + "|".join(n for n in dir(builtins) if not n.startswith("_")) + r")\b"), "builtin"),
    _Rule(re.compile(r"\btorch\.ops\.[\w.]+"), "torch"),
    _Rule(re.compile(r"\b(?:def|class)\s+(\w+)"), "name", 1),
    _Rule(re.compile(r"^\s*@[\w.]+"), "decorator"),
    _Rule(re.compile(r"\b(?:0[xX][0-9a-fA-F_]+|\d[\d_]*\.?\d*(?:[eE][+-]?\d+)?j?)\b"), "number"),
]
# Strings and comments are found together, left to right, so a '#' inside a string is not a comment.
_STRING_OR_COMMENT = re.compile(r"""(?P<triple>'''|\"\"\")|(?P<string>[rbfuRBFU]{0,2}('[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"))|(?P<comment>\#.*)""")


class PythonHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, dark: bool | None = None) -> None:
        super().__init__(document)
        colours = _DARK if (theme.is_dark() if dark is None else dark) else _LIGHT
        self.formats: dict[str, QTextCharFormat] = {}
        for style, colour in colours.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            if style in ("keyword", "name"):
                fmt.setFontWeight(QFont.Weight.Bold)
            if style == "comment":
                fmt.setFontItalic(True)
            self.formats[style] = fmt

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt's name)
        for rule in _RULES:
            for m in rule.pattern.finditer(text):
                start, end = m.span(rule.group)
                self.setFormat(start, end - start, self.formats[rule.style])
        self.setCurrentBlockState(_STATE_NONE)
        pos = 0
        state = self.previousBlockState()
        if state in _TRIPLE:
            pos = self._close_triple(text, 0, state)
            if pos < 0:
                return
        while pos < len(text):
            m = _STRING_OR_COMMENT.search(text, pos)
            if m is None:
                return
            if m.group("triple"):
                state = _STATE_TRIPLE_SINGLE if m.group("triple") == "'''" else _STATE_TRIPLE_DOUBLE
                pos = self._close_triple(text, m.start(), state, after=m.end())
                if pos < 0:
                    return
            else:
                style = "comment" if m.group("comment") else "string"
                self.setFormat(m.start(), m.end() - m.start(), self.formats[style])
                pos = m.end()

    def _close_triple(self, text: str, start: int, state: int, after: int | None = None) -> int:
        """Colour a triple-quoted string from `start`; the index after it, or -1 if it runs past this line."""
        end = text.find(_TRIPLE[state], start if after is None else after)
        if end < 0:
            self.setFormat(start, len(text) - start, self.formats["string"])
            self.setCurrentBlockState(state)
            return -1
        end += 3
        self.setFormat(start, end - start, self.formats["string"])
        return end
