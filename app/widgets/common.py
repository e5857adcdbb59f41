"""Small widget helpers shared by the views."""
from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QPlainTextEdit,
    QProgressBar,
    QRadioButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.settings import app_settings


def splitter(orientation: Qt.Orientation, first: QWidget, second: QWidget, sizes: tuple[int, int],
             stretch: tuple[int, int], remember: str | None = None) -> QSplitter:
    """Two panes side by side (or stacked), with their starting sizes and how extra space is shared. With
    `remember`, the sizes the user last dragged to (QSettings `splitters/<remember>`) replace `sizes`, in every new
    view of that kind."""
    split = QSplitter(orientation)
    split.addWidget(first)
    split.addWidget(second)
    split.setStretchFactor(0, stretch[0])
    split.setStretchFactor(1, stretch[1])
    split.setSizes(list(remembered_sizes(remember) or sizes))
    if remember is not None:
        split.splitterMoved.connect(lambda _pos, _i: app_settings().setValue(f"splitters/{remember}", split.sizes()))
    return split


def remembered_sizes(name: str | None) -> list[int] | None:
    if name is None:
        return None
    value = app_settings().value(f"splitters/{name}")
    try:
        sizes = [int(v) for v in value] if isinstance(value, list) else None
    except (TypeError, ValueError):
        return None
    return sizes if sizes and len(sizes) == 2 and all(s >= 0 for s in sizes) and sum(sizes) > 0 else None


def fit_tabs(tabs: QTabWidget) -> None:
    """Every tab stays in view in a narrow pane: titles elide (their tooltips have them whole) instead of hiding
    tabs behind scroll arrows."""
    bar = tabs.tabBar()
    bar.setUsesScrollButtons(False)
    bar.setElideMode(Qt.TextElideMode.ElideRight)
    bar.setExpanding(False)
    for i in range(tabs.count()):
        tabs.setTabToolTip(i, tabs.tabToolTip(i) or tabs.tabText(i))


def radio_column(parent: QWidget, choices: Sequence[tuple[str, str]], key: str, checked: int
                 ) -> tuple[QButtonGroup, QVBoxLayout]:
    """A job dialog's one-of choice: a radio button per (value, text) in a column, the value kept as the button's
    `key` property, the `checked`-th chosen."""
    group = QButtonGroup(parent)
    column = QVBoxLayout()
    for i, (value, text) in enumerate(choices):
        button = QRadioButton(text)
        button.setProperty(key, value)
        group.addButton(button, i)
        column.addWidget(button)
    group.button(checked).setChecked(True)
    return group, column


def append_output(view: QPlainTextEdit, stream: str, text: str) -> None:
    """A line of a worker's output in a log view: the script's stdout as it is, its stderr in red, the worker's own
    lines in grey."""
    if stream == "stdout":
        view.appendPlainText(text)
        return
    color = "#c0392b" if stream == "stderr" else "#7f7f7f"
    view.appendHtml(f"<span style='color:{color}; white-space:pre'>{html.escape(text)}</span>")


def busy_bar() -> QProgressBar:
    """A thin bar that says a job is running (no percentage: a script's run has none)."""
    bar = QProgressBar()
    bar.setRange(0, 0)
    bar.setMaximumHeight(12)
    bar.setTextVisible(False)
    return bar
