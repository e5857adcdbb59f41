"""Typed doors to the few PySide6 calls whose stubs say less (or other) than what they do, so the rest of the app is
type-checked without casts:

- `QApplication.instance()` is typed as an optional `QCoreApplication`; in this app it is always the one
  `QApplication` (app/main.py makes it before any window): `application()`.
- Qt properties passed as keyword arguments (`QToolButton(text=..., toolTip=...)`) work at run time but are not in
  the stubs: `tool_button`, `push_button` set them through their setters.
- `QTreeWidget.topLevelItem(i)` and `QTreeWidgetItem.child(i)` are optional in the stubs (an index out of range);
  walking a tree in range never meets None: `top_level_items`, `child_items`.
- `QTableWidget.cellWidget` is a plain optional `QWidget`: `cell_widget(table, row, column, QSpinBox)` checks it is
  the kind of widget the table put there.

Importing this module also turns off PySide6's source scan of later imports (`_skip_feature_scan`), so the window's
modules load without it: import it before them (app/main.py does).
"""
from __future__ import annotations

import sys
from typing import TypeVar

from PySide6.QtWidgets import (
    QApplication,
    QPushButton,
    QTableWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

W = TypeVar("W", bound=QWidget)


def _skip_feature_scan() -> None:
    """PySide6 reads the whole source of every module imported after it (`_mod_uses_pyside` in shibokensupport's
    feature.py, called for each import) to learn whether `from __feature__ import snake_case` could switch names
    for it. The viewer never selects a feature, and the answer is only read once a module does; the scan was 14-16 ms
    of the ~130 ms of importing the window's modules (135 files read and tokenized). Every module is taken to use
    PySide6, the safe answer: it keeps Qt's own names whatever another module selects. Where PySide6 has no such
    hook (another version), nothing changes."""
    feature = sys.modules.get("shibokensupport.feature")
    if feature is not None and callable(getattr(feature, "_mod_uses_pyside", None)):
        vars(feature)["_mod_uses_pyside"] = _uses_pyside


def _uses_pyside(module: object) -> bool:
    return True


_skip_feature_scan()


def application() -> QApplication:
    """The running QApplication, made here first if there is none yet (a test, a command that draws offscreen)."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    if app is not None:
        raise RuntimeError("a QCoreApplication without widgets is running; PT2 Viewer's windows need a QApplication")
    return QApplication(sys.argv[:1])


def tool_button(text: str, tip: str = "", *, checkable: bool = False, auto_raise: bool = False,
                parent: QWidget | None = None) -> QToolButton:
    button = QToolButton(parent)
    button.setText(text)
    if tip:
        button.setToolTip(tip)
    button.setCheckable(checkable)
    button.setAutoRaise(auto_raise)
    return button


def push_button(text: str, tip: str = "", *, enabled: bool = True) -> QPushButton:
    button = QPushButton(text)
    if tip:
        button.setToolTip(tip)
    button.setEnabled(enabled)
    return button


def top_level_items(tree: QTreeWidget) -> list[QTreeWidgetItem]:
    return [item for i in range(tree.topLevelItemCount()) if (item := tree.topLevelItem(i)) is not None]


def child_items(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [child for i in range(item.childCount()) if (child := item.child(i)) is not None]


def cell_widget(table: QTableWidget, row: int, column: int, kind: type[W]) -> W:
    widget = table.cellWidget(row, column)
    if not isinstance(widget, kind):
        raise TypeError(f"the table's cell ({row}, {column}) holds {type(widget).__name__}, not {kind.__name__}")
    return widget


__all__ = ["application", "cell_widget", "child_items", "push_button", "tool_button", "top_level_items"]
