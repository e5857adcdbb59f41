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
- `QTimer.singleShot(ms, context, callable)` keeps the callable for good in PySide6 6.11 when the context is
  destroyed before the timer fires: a tab closed with a layout round or a repaint pending kept its whole program in
  memory. `later(context, callable, ms)` runs it on a timer owned by the context instead, which goes with it.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, QTimer
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


def application() -> QApplication:
    """The running QApplication, made here first if there is none yet (a test, a command that draws offscreen)."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    if app is not None:
        raise RuntimeError("a QCoreApplication without widgets is running; PT2 Viewer's windows need a QApplication")
    return QApplication(sys.argv[:1])


def later(context: QObject, call: Callable[[], object], ms: int = 0) -> None:
    """Call `call` in `ms` milliseconds (0: the next turn of the event loop), unless `context` is gone by then; nothing
    of `call` is kept once it ran or `context` went."""
    timer = QTimer(context)
    timer.setSingleShot(True)
    timer.timeout.connect(call)
    timer.timeout.connect(timer.deleteLater)
    timer.start(ms)


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


__all__ = ["application", "cell_widget", "child_items", "later", "push_button", "tool_button", "top_level_items"]
