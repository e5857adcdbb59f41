"""The source views' Python colours: Pygments' lexer behind a QSyntaxHighlighter, with the theme's colours, on a
real editor; multi-line strings are followed across lines and after edits."""
from __future__ import annotations

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from pt2_viewer.app import theme
from pt2_viewer.app.widgets.python_highlighter import PythonHighlighter

SOURCE = '''import torch
@cache
def forward(self, x):  # a "comment"
    """Two
    lines."""
    s = "a # not a comment"
    return torch.ops.aten.add.Tensor(x, 1.5) and len(x)
'''


def _styles(editor: QPlainTextEdit, line: int) -> dict[str, str]:
    """The coloured words of one line: text -> style name (by the theme's light colours)."""
    by_colour = {theme.code_color(style, dark=False).name(): style for style in theme.CODE_STYLES}
    block = editor.document().findBlockByNumber(line)
    return {block.text()[r.start:r.start + r.length]: by_colour[r.format.foreground().color().name()]
            for r in block.layout().formats()}


def _editor(qtbot, text: str) -> tuple[QPlainTextEdit, PythonHighlighter]:  # type: ignore[no-untyped-def]
    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    highlighter = PythonHighlighter(editor.document(), dark=False)
    editor.setPlainText(text)
    highlighter.rehighlight()
    return editor, highlighter


def test_python_is_coloured_by_token(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor, _ = _editor(qtbot, SOURCE)
    assert _styles(editor, 0) == {"import": "keyword"}
    assert _styles(editor, 1) == {"@cache": "decorator"}
    assert _styles(editor, 2) == {"def": "keyword", "forward": "name", "self": "builtin",
                                  '# a "comment"': "comment"}
    assert _styles(editor, 3) == {'"""Two': "string"}
    assert _styles(editor, 4) == {'    lines."""': "string"}
    assert _styles(editor, 5) == {'"a # not a comment"': "string"}
    assert _styles(editor, 6) == {"return": "keyword", "torch.ops.aten.add.Tensor": "torch", "1.5": "number",
                                  "and": "keyword", "len": "builtin"}


def test_an_edit_that_opens_a_string_recolours_the_lines_below(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor, _ = _editor(qtbot, SOURCE)
    assert editor.document().findBlockByNumber(3).userState() == 1  # the docstring goes on
    cursor = QTextCursor(editor.document().findBlockByNumber(3))
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    cursor.insertText('"""')  # closes the docstring on its first line: line 4's quotes now open one
    assert _styles(editor, 3) == {'"""Two"""': "string"}
    assert _styles(editor, 4) == {'"""': "string"}
    assert _styles(editor, 5) == {'    s = "a # not a comment"': "string"}
    assert _styles(editor, 6) == {"    return torch.ops.aten.add.Tensor(x, 1.5) and len(x)": "string"}


def test_dark_palette_colours(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    highlighter = PythonHighlighter(editor.document(), dark=True)
    assert highlighter.formats["keyword"].foreground().color() == theme.code_color("keyword", dark=True)
    assert theme.code_color("keyword", dark=True) != theme.code_color("keyword", dark=False)
