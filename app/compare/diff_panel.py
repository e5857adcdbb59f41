"""The diff in the compare view: both graphs painted, the change list grouped by module, ‹ › and F3 through it.

`DiffPanel` shows a `ProgramDiff` (core/diff/): a summary, a tree of modules (their roll-up: `+2 ops, 1 dtype
change`) holding their changes (what lowering was expected to do, `lowered`, in muted text, which ‹ › pass over),
‹ › with the position, and "Show changes only", which folds away every group holding
no change and opens those that hold some, on both sides (unticked: the groups as they were). `attach_diff` adds it to
a `CompareView`: each side gets the diff as an overlay (core/diff/overlay.py: added, removed and changed in their own
colours; a collapsed group takes the sum of its changes, said in its tooltip and the legend), a change picked in the
list is revealed and selected on both sides, and F3 / Shift+F3, anywhere in the comparison, go through the changes
(the window's own F3, Find's next match, applies elsewhere), leaving Link views as the user set it (the comparison's
`show_pair`). The view itself is left as it was, apart from the one call that attaches this.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.app.qt import tool_button
from pt2_viewer.core.compare.session import LEFT, RIGHT, CompareSession
from pt2_viewer.core.diff.nodes import LOWERED
from pt2_viewer.core.diff.output import change_text, summary_line
from pt2_viewer.core.diff.overlay import changed_nodes, diff_overlay, group_changes
from pt2_viewer.core.diff.program_diff import ProgramDiff, diff_programs
from pt2_viewer.core.graph.navigation import Hits


class Comparison(Protocol):
    """What the diff uses of a comparison (app/compare/view.py's `CompareView`, which hands itself): its session, both
    sides' documents and Details, the link toggle and the line under them, whether it holds the focus, and how it
    shows a change on both sides (`show_pair`)."""

    @property
    def session(self) -> CompareSession: ...
    @property
    def docs(self) -> Mapping[str, DocumentWidget]: ...
    @property
    def details(self) -> Mapping[str, DetailsPanel]: ...
    @property
    def link(self) -> QAbstractButton: ...
    @property
    def link_text(self) -> QLabel: ...
    def isAncestorOf(self, child: QWidget) -> bool: ...  # noqa: N802 (Qt's name)
    def show_pair(self, names: Mapping[str, str | None]) -> None:
        """Reveal and select each side's node (None: nothing selected there), each centred in its graph; linked
        views stay linked, moving together from there on."""

INDEX_ROLE = Qt.ItemDataRole.UserRole


class DiffPanel(QWidget):
    """Emits `change_chosen(index into diff.nodes)` when the user picks a change (a click, ‹ ›, F3) and
    `changes_only(bool)` when "Show changes only" is ticked or unticked."""

    change_chosen = Signal(int)
    changes_only = Signal(bool)

    def __init__(self, diff: ProgramDiff, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.diff = diff
        self.summary = QLabel(summary_line(diff))
        self.summary.setWordWrap(True)
        self.previous = tool_button("‹", "Previous change (Shift+F3)")
        self.next = tool_button("›", "Next change (F3)")
        self.position = QLabel()
        self.only = QCheckBox("Show changes only")
        self.only.setToolTip("Fold away every module group that holds no change, on both sides")
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.items: dict[int, QTreeWidgetItem] = {}
        order = self._fill()
        self.hits = Hits([str(i) for i in order], "change", at=-1)
        self.position.setText(self.hits.text())
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for w in (self.previous, self.position, self.next):
            row.addWidget(w)
        row.addStretch(1)
        row.addWidget(self.only)
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(self.summary)
        v.addLayout(row)
        v.addWidget(self.tree, 1)
        self.previous.clicked.connect(lambda: self.step(-1))
        self.next.clicked.connect(lambda: self.step(1))
        self.tree.itemClicked.connect(self._clicked)
        self.only.toggled.connect(self.changes_only)
        for w in (self.previous, self.next):
            w.setEnabled(bool(order))

    def _fill(self) -> list[int]:
        """The module tree's rows (the roll-up of each module with changes of its own), each change under its module;
        the changes' order in the list, which ‹ › follow (what lowering was expected to do, muted, left out, unless that
        is every change the pair has)."""
        muted = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        rows = {m.path: m for m in self.diff.modules}
        by_module: dict[str, list[int]] = {}
        for i, c in enumerate(self.diff.nodes):
            by_module.setdefault(c.module, []).append(i)
        order: list[int] = []
        lowered: list[int] = []
        for module in sorted(by_module, key=lambda p: [(0, int(s)) if s.isdigit() else (1, s) for s in p.split(".")]
                             if p else []):
            roll = rows.get(module)
            head = QTreeWidgetItem([f"{module or '(model)'}: {roll.text() if roll else ''}"])
            self.tree.addTopLevelItem(head)
            for i in by_module[module]:
                item = QTreeWidgetItem([change_text(self.diff.nodes[i])])
                item.setData(0, INDEX_ROLE, i)
                head.addChild(item)
                self.items[i] = item
                if self.diff.nodes[i].kind == LOWERED:
                    item.setForeground(0, muted)
                    lowered.append(i)
                else:
                    order.append(i)
            head.setExpanded(True)
        return order or lowered  # a pair whose every change is what lowering does (core ATen -> .pte): those

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        index = item.data(0, INDEX_ROLE)
        if index is None:
            return
        if str(index) in self.hits.nodes:  # a lowered change is shown, not stepped through
            self.hits.at = self.hits.nodes.index(str(index))
        self._show(int(index))

    def step(self, by: int) -> int | None:
        """The next (+1) or previous (-1) change, round and round; None when there is none."""
        key = self.hits.move(by)
        if key is None:
            return None
        self._show(int(key))
        return int(key)

    def _show(self, index: int) -> None:
        self.position.setText(self.hits.text())
        item = self.items[index]
        self.tree.setCurrentItem(item)
        self.tree.scrollToItem(item)
        self.change_chosen.emit(index)


class _F3(QObject):
    """F3 / Shift+F3 while the focus is in the comparison: the next or previous change (not Find's next match)."""

    def __init__(self, view: Comparison, panel: DiffPanel) -> None:
        super().__init__(panel)
        self.view, self.panel = view, panel

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        assert isinstance(event, QKeyEvent)
        focus = QApplication.focusWidget()
        if event.key() != Qt.Key.Key_F3 or focus is None or not (focus is self.view or self.view.isAncestorOf(focus)):
            return False
        if kind is QEvent.Type.ShortcutOverride:
            event.accept()  # a key press for us, not the menu's F3
            return True
        self.panel.step(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 1)
        return True


def attach_diff(view: Comparison, diff: ProgramDiff | None = None) -> DiffPanel:
    """Diff the view's two programs (torch's provenance for a decomposition, the ETRecord's debug handles for a
    lowering), paint both sides, and return the panel (the caller places it)."""
    session = view.session
    if diff is None:
        mapping = session.mapping if session.method in ("decomposition", "etrecord") else None
        diff = diff_programs(session.left, session.right, mapping)
    panel = DiffPanel(diff)
    sides = {LEFT: "a", RIGHT: "b"}
    for side, doc in view.docs.items():
        doc.tools.add_overlay(diff_overlay(diff, sides[side]))
    saved: dict[str, frozenset[str]] = {}

    def changes_only(on: bool) -> None:
        for side, doc in view.docs.items():
            model = doc.model
            if on:
                saved[side] = frozenset(model.level.scene.expanded)
                changed = changed_nodes(diff, sides[side])
                model.set_expansion(frozenset(group_changes(model.level.index, changed)))
            elif side in saved:
                model.set_expansion(saved.pop(side))

    def chosen(index: int) -> None:
        change = diff.nodes[index]
        view.show_pair({LEFT: change.a, RIGHT: change.b})  # Link views stays as the user set it
        for side, name in ((LEFT, change.a), (RIGHT, change.b)):
            view.details[side].show_node(name)
        view.link_text.setText(f"{change_text(change)}  [{change.module or '(model)'}]  ({panel.hits.text()})")

    panel.change_chosen.connect(chosen)
    panel.changes_only.connect(changes_only)
    app = QApplication.instance()
    if app is not None:
        f3 = _F3(view, panel)
        app.installEventFilter(f3)  # a child of the panel, in the view: Qt drops the filter when they go
    return panel
