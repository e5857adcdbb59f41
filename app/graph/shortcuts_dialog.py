"""Help > Keyboard Shortcuts: every shortcut the window's menus define, read from their actions (so the list is
never out of date), then the graph's own keys and gestures (core/graph/navigation.GRAPH_KEYS)."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMainWindow, QMenu, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from pt2_viewer.core.graph.navigation import GRAPH_KEYS


def menu_shortcuts(window: QMainWindow) -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every menu action with a shortcut, in menu order."""
    rows: list[tuple[str, str, str]] = []

    def walk(menu: QMenu, title: str) -> None:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{title} › {action.text().replace('&', '')}")
            elif action.shortcuts():
                keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
                rows.append((title, action.text().replace("&", "").rstrip("…"), keys))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, top.text().replace("&", ""))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard Shortcuts")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Keys", "What they do"])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        for menu, action, keys in menu_shortcuts(window):
            self.tree.addTopLevelItem(QTreeWidgetItem([keys, f"{menu} › {action}"]))
        for keys, what in GRAPH_KEYS:
            self.tree.addTopLevelItem(QTreeWidgetItem([keys, f"Graph: {what}"]))
        self.tree.resizeColumnToContents(0)
        self.tree.resizeColumnToContents(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        layout.addWidget(buttons)
        # as wide as its longest line ("View › Collapse All Groups" was cut to "collap…"), within the screen
        margins = layout.contentsMargins()
        wanted = (self.tree.columnWidth(0) + self.tree.columnWidth(1) + 2 * self.tree.frameWidth()
                  + self.tree.verticalScrollBar().sizeHint().width() + margins.left() + margins.right())
        room = self.screen().availableGeometry().size()
        self.resize(min(max(640, wanted), room.width()), min(520, room.height()))


def show_shortcuts(window: QMainWindow) -> ShortcutsDialog:
    """Open the table beside the window (not modal: it can stay open while the keys are tried)."""
    dialog = ShortcutsDialog(window)
    dialog.show()
    return dialog

