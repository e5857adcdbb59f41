"""Small widget helpers shared by the views."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QWidget


def splitter(orientation: Qt.Orientation, first: QWidget, second: QWidget, sizes: tuple[int, int],
             stretch: tuple[int, int]) -> QSplitter:
    """Two panes side by side (or stacked), with their starting sizes and how extra space is shared."""
    split = QSplitter(orientation)
    split.addWidget(first)
    split.addWidget(second)
    split.setStretchFactor(0, stretch[0])
    split.setStretchFactor(1, stretch[1])
    split.setSizes(list(sizes))
    return split
