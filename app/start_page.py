"""What the window shows with no document open: Open, the recent files, the bundled examples, and where to drop.

A blank grey window tells a new user nothing; this page says what the app opens and gives one click to each way in.
It only emits what the user asked for; the main window opens it.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.core.platform import install

EXAMPLES_DIR = install.resources() / "examples"
PATH_ROLE = Qt.ItemDataRole.UserRole


def bundled_examples() -> list[Path]:
    """The example programs and scripts shipped with the app."""
    if not EXAMPLES_DIR.is_dir():
        return []
    return sorted(p for p in EXAMPLES_DIR.iterdir() if p.suffix in (".pt2", ".py"))


class StartPage(QWidget):
    """Emits `open_requested()` for the Open button and `path_requested(str)` for a recent file or an example."""

    open_requested = Signal()
    path_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel("<h2>PT2 Viewer</h2>Look inside <code>torch.export</code> programs (<code>.pt2</code>) and "
                       "model scripts (<code>.py</code>).")
        title.setWordWrap(True)
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip("Open a .pt2 archive or a model script (Ctrl+O)")
        self.open_button.clicked.connect(self.open_requested)
        drop = QLabel("…or pick one below, or drop a file anywhere on this window.")
        drop.setStyleSheet("color: gray")
        self.recent = QListWidget()
        self.examples = QListWidget()
        for lst in (self.recent, self.examples):
            lst.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # long paths: the middle goes, the tooltip has it all
            lst.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            lst.setMaximumHeight(360)
            lst.setCursor(Qt.CursorShape.PointingHandCursor)
            lst.itemClicked.connect(lambda it: self.path_requested.emit(it.data(PATH_ROLE)))
        self.no_recent = QLabel("No recent files yet.")
        self.no_recent.setStyleSheet("color: gray")
        for path in bundled_examples():
            item = QListWidgetItem(path.name + ("   (model script: runs in the worker)" if path.suffix == ".py"
                                                else ""))
            item.setData(PATH_ROLE, str(path))
            item.setToolTip(str(path))
            self.examples.addItem(item)

        open_row = QHBoxLayout()
        open_row.addWidget(self.open_button)
        open_row.addWidget(drop, 1)
        lists = QHBoxLayout()
        for heading, body in (("Recent files", (self.recent, self.no_recent)), ("Examples", (self.examples,))):
            col = QVBoxLayout()
            col.addWidget(QLabel(f"<b>{heading}</b>"))
            for w in body:
                col.addWidget(w)
            lists.addLayout(col, 1)
        inner = QWidget()
        inner.setMaximumWidth(900)
        v = QVBoxLayout(inner)
        v.addWidget(title)
        v.addLayout(open_row)
        v.addSpacing(12)
        v.addLayout(lists)
        v.addSpacing(12)
        self.drop_zone = QLabel("Drop a .pt2 archive or a .py model script here")
        self.drop_zone.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.drop_zone.setMinimumHeight(120)
        self.drop_zone.setStyleSheet("QLabel { border: 2px dashed #b0b0b0; border-radius: 8px; color: gray; }")
        v.addWidget(self.drop_zone, 1)
        outer = QHBoxLayout(self)
        outer.addStretch(1)
        outer.addWidget(inner, 4)
        outer.addStretch(1)

    def set_recent(self, paths: list[str]) -> None:
        self.recent.clear()
        for path in paths:
            item = QListWidgetItem(f"{Path(path).name}   {Path(path).parent}")
            item.setData(PATH_ROLE, path)
            item.setToolTip(path)
            self.recent.addItem(item)
        self.recent.setVisible(bool(paths))
        self.no_recent.setVisible(not paths)
