"""Two programs side by side: a decomposition next to its original, or any two open programs.

Two document widgets (each with its own `LinkedDocumentModel`) share one layout client; a "Link views" checkbox
makes zoom and pan follow each other; selecting a node on one side selects what it became (or came from) on the
other, through the `CompareSession` (core/compare/session.py) that holds the mapping. Below them, the op diff table:
clicking an op highlights its nodes on both sides. The decomposed program can be saved as `.pt2`.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.compare.diff_panel import attach_diff
from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.view import GraphView
from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.app.widgets.common import splitter
from pt2_viewer.app.widgets.file_dialogs import open_file, save_file
from pt2_viewer.app.widgets.source_view import open_source
from pt2_viewer.core.compare.decomposition import Decomposition, Owner
from pt2_viewer.core.compare.session import (
    LEFT,
    RIGHT,
    CompareSession,
    LinkedDocumentModel,
    session_from_decomposition,
    session_from_programs,
)
from pt2_viewer.core.diff.program_diff import ProgramDiff, diff_programs
from pt2_viewer.core.graph.ids import node_of
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.util.files import write_atomically
from pt2_viewer.core.util.words import plural

OP_COLUMNS = ("op", "before", "after", "change", "core ATen")
NON_CORE_BRUSH = QBrush(QColor("#fde2c4"))
OTHER_FILE = "Another file…"


def save_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """Copy `src` to `dst` atomically."""
    write_atomically(dst, lambda tmp: shutil.copyfile(src, tmp), parents=False)


@dataclass
class ComparePlan:
    """Everything a CompareView shows, built without Qt: what the window builds off the GUI thread
    (`ArchiveLoader.run`) for a big decomposition, then hands to `CompareView.from_plan`."""

    session: CompareSession
    left_archive: Archive
    right_archive: Archive
    models: tuple[LinkedDocumentModel, LinkedDocumentModel]
    decomposition: Decomposition | None = None
    diff: ProgramDiff | None = None  # the structural diff (core/diff/), made off the GUI thread with the rest


def plan_decomposition(original: Archive, before: Program, decomposition: Decomposition, decomposed: Archive
                       ) -> ComparePlan:
    """The original program beside its decomposition: the mapping, the op diff, and both document models."""
    session = session_from_decomposition(decomposition, before, decomposed.program())
    models = (LinkedDocumentModel(original, session.left), LinkedDocumentModel(decomposed, session.right))
    return ComparePlan(session, original, decomposed, models, decomposition=decomposition,
                       diff=diff_programs(session.left, session.right, session.mapping))


def plan_programs(left: tuple[Archive, Program], right: tuple[Archive, Program]) -> ComparePlan:
    """Any two programs, paired by the structural diff's matcher (core/diff/matcher.py), with both models."""
    titles = [f"{Path(a.path).name} [{p.name}]" for a, p in (left, right)]
    diff = diff_programs(left[1], right[1])
    session = session_from_programs(left[1], right[1], diff.node_mapping(), *titles)
    models = (LinkedDocumentModel(left[0], session.left), LinkedDocumentModel(right[0], session.right))
    return ComparePlan(session, left[0], right[0], models, diff=diff)


class CompareView(DocumentTab):
    """Emits `ready` once both graphs are on screen, `status(str)` for the status bar."""

    ready = Signal()

    def __init__(self, session: CompareSession, left_archive: Archive, right_archive: Archive,
                 layouts: LayoutClient, decomposition: Decomposition | None = None, parent: QWidget | None = None,
                 *, interactive: bool = True,
                 models: tuple[LinkedDocumentModel, LinkedDocumentModel] | None = None,
                 diff: ProgramDiff | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.decomposition = decomposition
        self.decomposed_path = decomposition.output if decomposition is not None else None
        self.saved_decomposed: str | None = None  # where Save Decomposed As… last wrote it
        self._syncing = False
        self._offset = (0.0, 0.0)  # where the right view sits relative to the left, in scene fractions (linked)
        self._drawn: dict[GraphView, object] = {}  # each view's layout as last shown here (_redrawn)
        self._revealing: set[str] = set()  # sides whose node `show_pair` is revealing: no view drags the other
        left, right = models or (LinkedDocumentModel(left_archive, session.left),
                                 LinkedDocumentModel(right_archive, session.right))
        self.docs = {LEFT: DocumentWidget(left, layouts, interactive=interactive),
                     RIGHT: DocumentWidget(right, layouts, interactive=interactive)}
        self._pending = {LEFT, RIGHT}

        self.link = QCheckBox("Link views")
        self.link.setToolTip("Zoom and pan both graphs together")
        self.link.setChecked(True)
        self.minimaps = QCheckBox("Minimap")
        self.minimaps.setToolTip("Show the minimap over the left graph (the two move together)")
        self.save_button = QPushButton("Save Decomposed As…")
        self.save_button.setVisible(decomposition is not None)
        how = ("mapping from torch's provenance" if session.method == "decomposition"
               else "linked through the ETRecord's debug handles" if session.method == "etrecord"
               else "nodes matched by module, op and graph position (no provenance between these programs)")
        self.caption = QLabel(f"<b>{session.left_title}</b> ⟶ <b>{session.right_title}</b> &nbsp; ({how})")
        self.link_text = QLabel("Select a node on either side to see what it became or came from.")
        self.link_text.setWordWrap(True)
        self.non_core = QLabel(session.non_core_text())
        self.non_core.setWordWrap(True)
        if session.non_core_ops:
            self.non_core.setStyleSheet("color: #a0522d; font-weight: bold")
        self.table = QTableWidget(0, len(OP_COLUMNS))
        self.table.setHorizontalHeaderLabels(OP_COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)  # compact rows
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(False)
        self._fill_table()
        # Each side's Details, beside the table: what the selected node (or its counterpart) is.
        self.details = {side: DetailsPanel() for side in (LEFT, RIGHT)}
        for side, archive in ((LEFT, left_archive), (RIGHT, right_archive)):
            doc, panel = self.docs[side], self.details[side]
            level = doc.model.level
            panel.set_program(doc.model.program, level.graph, level.index, archive=archive)
            panel.node_requested.connect(doc.reveal)
            panel.subgraph_requested.connect(doc.enter_subgraph)
            panel.source_requested.connect(lambda f, line, d=doc: open_source(f, line, d))

        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(self.link)
        top.addWidget(self.minimaps)
        top.addWidget(self.save_button)
        sides = QSplitter(Qt.Orientation.Horizontal)
        for side in (LEFT, RIGHT):
            doc = self.docs[side]
            doc.panels.setVisible(False)  # room for two graphs; the op diff table is the panel here
            sides.addWidget(doc)
        bottom = QWidget()
        bv = QVBoxLayout(bottom)
        bv.setContentsMargins(0, 0, 0, 0)
        bv.addWidget(self.link_text)
        bv.addWidget(self.non_core)
        row = QHBoxLayout()
        row.addWidget(self.details[LEFT], 1)
        row.addWidget(self.table, 0)
        row.addWidget(self.details[RIGHT], 1)
        self.diff_panel = attach_diff(self, diff)  # both sides painted, the change list (app/compare/diff_panel.py)
        row.insertWidget(1, self.diff_panel, 1)
        bv.addLayout(row, 1)
        split = splitter(Qt.Orientation.Vertical, sides, bottom, sizes=(560, 320), stretch=(3, 1),
                         remember="compare")
        v = QVBoxLayout(self)
        v.setContentsMargins(4, 4, 4, 4)
        v.addLayout(top)
        v.addWidget(split, 1)

        for side, other in ((LEFT, RIGHT), (RIGHT, LEFT)):
            doc = self.docs[side]
            doc.view.node_clicked.connect(lambda name, s=side: self.select(s, name))
            doc.view.background_clicked.connect(lambda s=side: self.select(s, None))
            doc.view.view_changed.connect(lambda a=doc.view, b=self.docs[other].view: self._sync_view(a, b))
            doc.view.scene_shown.connect(lambda s=side: self._redrawn(s))
            doc.graph_ready.connect(lambda s=side: self._side_ready(s))
            doc.status.connect(self.status)
        self.table.cellClicked.connect(lambda row, _col: self.highlight_op(self.session.rows[row].op))
        self.link.toggled.connect(self._link_toggled)
        for doc in self.docs.values():
            self.minimaps.toggled.connect(doc.minimap.set_asked)
        self.save_button.clicked.connect(self.save_dialog)

    # -- construction ------------------------------------------------------------------------------------------
    @classmethod
    def from_plan(cls, plan: ComparePlan, layouts: LayoutClient, *, interactive: bool = True) -> CompareView:
        """The view of a plan built off the GUI thread (`plan_decomposition`, `plan_programs`)."""
        return cls(plan.session, plan.left_archive, plan.right_archive, layouts, decomposition=plan.decomposition,
                   interactive=interactive, models=plan.models, diff=plan.diff)

    # -- the tab contract (app/graph/tab.py) --------------------------------------------------------------------
    def source_file(self) -> str | None:
        return self.left.model.archive.path

    def current_program(self) -> DocumentWidget | None:
        return None  # two programs: the Program menu acts on one program at a time

    def graphs(self) -> list[DocumentWidget]:
        return [self.left, self.right]

    def can_save_program(self) -> bool:
        return False

    def program_file(self) -> str | None:
        return None

    def can_save_decomposed(self) -> bool:
        return bool(self.decomposed_path)

    def save_decomposed_dialog(self) -> None:
        self.save_dialog()

    def unsaved(self) -> str | None:
        """A program Decompose… made, not saved yet: its job's folder goes when this tab closes. (A Numerics
        candidate shown here stays its job's, and is not asked about.)"""
        d = self.decomposition
        if d is None or self.saved_decomposed is not None or not d.may_delete(Owner.COMPARE_TAB):
            return None
        return f"the decomposed program {Path(d.output).name}"

    def release(self) -> None:
        """The tab is closing: the decomposition's folder goes with it when it is the tab's (a decompose job's), and
        stays when it is another's (the Numerics job's candidate, which its panel still uses)."""
        if self.decomposition is not None:
            self.decomposition.release(Owner.COMPARE_TAB)

    @property
    def left(self) -> DocumentWidget:
        return self.docs[LEFT]

    @property
    def right(self) -> DocumentWidget:
        return self.docs[RIGHT]

    def title(self) -> str:
        name = Path(self.left.model.archive.path).name
        return f"{name} ⟷ {self.session.right_title}" if self.decomposed_path else \
            f"{name} ⟷ {Path(self.right.model.archive.path).name}"

    def _fill_table(self) -> None:
        rows = self.session.rows
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            core = "" if self.session.non_core_ops is None else ("no" if row.non_core else "yes")
            cells = (row.op, str(row.before), str(row.after), row.change_text, core)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (1, 2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if row.non_core:
                    item.setBackground(NON_CORE_BRUSH)
                    item.setToolTip(f"{row.op} is outside the core ATen opset")
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        # as wide as its columns (the rest is for the two Details), never the whole width
        frame = 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width()
        self.table.setFixedWidth(min(self.table.horizontalHeader().length() + frame, 560))

    def _side_ready(self, side: str) -> None:
        if side in self._pending:
            self._pending.discard(side)
            if not self._pending:
                self._sync_view(self.left.view, self.right.view)
                self.ready.emit()

    # -- selection and highlights --------------------------------------------------------------------------------
    def select(self, side: str, node: str | None) -> None:
        """The user selected `node` on `side` (the document already selected it there): select its counterparts."""
        other = RIGHT if side == LEFT else LEFT
        mine, theirs = self.docs[side], self.docs[other]
        node = node_of(node)  # a group has no counterparts
        linked = self.session.counterparts(side, node) if node is not None else []
        assert isinstance(mine.model, LinkedDocumentModel) and isinstance(theirs.model, LinkedDocumentModel)
        mine.model.linked = []
        theirs.model.linked = linked
        theirs.model.select(None)
        mine.mark([])
        theirs.mark([])
        self.details[side].show_node(node)
        self.details[other].show_node(linked[0] if linked else None)
        if node is not None:
            self.link_text.setText(self.session.describe_link(side, node))
            if linked:
                self._show_counterpart(theirs, linked[0])

    def _show_counterpart(self, doc: DocumentWidget, node: str) -> None:
        """Scroll the partner pane to a selection's counterpart (its box, or the collapsed group holding it) at its
        zoom; linked views then keep that pairing as they move together (`_offset`)."""
        self._syncing = True
        try:
            doc.view.scroll_to_item(doc.model.level.scene.visible_item(node))
        finally:
            self._syncing = False
        self._keep_pairing()

    def show_pair(self, names: Mapping[str, str | None]) -> None:
        """A change shown on both sides (the diff's list, ‹ ›, F3): each side's node revealed, selected and centred
        (None: nothing selected there). Linked views stay linked: while a side is revealed (laid out again, maybe)
        neither drags the other, then they move together from where each is (`_offset`)."""
        for side, name in names.items():
            doc = self.docs[side]
            if name is None:
                doc.model.select(None)
                continue
            self._revealing.add(side)
            doc.reveal(name)  # centred now, or once its groups are laid out
            if doc.laying_out or not doc.ready:
                doc.graph_ready.connect(lambda s=side: self._revealed(s), Qt.ConnectionType.SingleShotConnection)
            else:
                self._revealed(side)

    def _revealed(self, side: str) -> None:
        self._revealing.discard(side)
        if not self._revealing:
            self._keep_pairing()

    def selected(self, side: str) -> list[str]:
        """What is selected on `side`: the user's own selection, or the counterparts linked to the other side's."""
        model = self.docs[side].model
        assert isinstance(model, LinkedDocumentModel)
        return [model.selection] if model.selection else list(model.linked)

    def highlight_op(self, op: str) -> None:
        """Mark the nodes calling `op` on both sides, and on each side that has some, reveal and zoom to the first
        with previous/next through the rest (each graph's step bar). Both sides moving to their own nodes cannot
        keep the views linked: Link views is turned off, and the line above the table says so."""
        found = {side: self.session.nodes_for_op(side, op) for side in (LEFT, RIGHT)}
        unlink = all(found.values()) and self.link.isChecked()
        if unlink:
            self.link.setChecked(False)
        for side in (LEFT, RIGHT):
            doc = self.docs[side]
            assert isinstance(doc.model, LinkedDocumentModel)
            doc.model.linked = []
            doc.model.select(None)
            doc.mark(found[side])
            doc.tools.go_through(found[side], op)
            if found[side]:
                doc.mark(found[side])  # revealing selected the first; the others stay marked
        counts = [len(found[LEFT]), len(found[RIGHT])]
        self.link_text.setText(f"{op}: {plural(counts[0], 'node')} on the left, {counts[1]} on the right (marked; "
                               "‹ › in each graph go through them"
                               + ("; Link views is off so each side shows its own" if unlink else "") + ")")

    # -- linked zoom and pan -------------------------------------------------------------------------------------
    def _link_toggled(self, on: bool) -> None:
        if on:
            self._offset = (0.0, 0.0)
            self._sync_view(self.left.view, self.right.view)

    def _redrawn(self, side: str) -> None:
        """One pane shows a new drawing (Expand all, Collapse all, a depth, a group toggled). Its scene is another
        now, so where it is across its scene says nothing about the other pane, which stays where it is. A pane
        drawn afresh (not keeping its view) goes back to its selection, or to the counterpart linked to the other
        side's; linked views then keep that pairing (`_offset`)."""
        doc = self.docs[side]
        self._drawn[doc.view] = doc.view.layout
        if side in self._pending:
            return  # the first drawing: both are aligned once both are drawn (_side_ready)
        target = node_of(self.selected(side)[0]) if self.selected(side) else None
        if target is not None and not doc.keeps_view:
            self._show_counterpart(doc, target)
        else:
            self._keep_pairing()

    def _keep_pairing(self) -> None:
        """Linked views move together from where each is now."""
        (lx, ly), (rx, ry) = _fraction(self.left.view), _fraction(self.right.view)
        self._offset = (rx - lx, ry - ly)

    def _sync_view(self, src: GraphView, dst: GraphView) -> None:
        """Give `dst` the zoom of `src` and the same relative position in its own scene. A view moving because a new
        drawing is being put in it (`_redrawn` comes once it is in) leaves `dst` where it is."""
        if (not self.link.isChecked() or self._syncing or self._revealing
                or self._drawn.get(src, src.layout) is not src.layout):
            return
        self._syncing = True
        try:
            dst.setTransform(src.transform())
            fx, fy = _fraction(src)
            sign = 1 if src is self.left.view else -1
            fx, fy = fx + sign * self._offset[0], fy + sign * self._offset[1]
            d = dst.sceneRect()
            dst.centerOn(d.left() + fx * d.width(), d.top() + fy * d.height())
        finally:
            self._syncing = False

    # -- saving --------------------------------------------------------------------------------------------------
    def save_dialog(self) -> None:
        if self.decomposed_path is None:
            return
        path = save_file(self, "Save decomposed program", self.left.model.archive.path,
                         Path(self.decomposed_path).name, "PyTorch export archives (*.pt2)")  # beside the original
        if path:
            self.save_decomposed(path)

    def save_decomposed(self, path: str) -> str:
        """Write the decomposed program to `path` (atomically); returns the status message."""
        assert self.decomposed_path is not None
        try:
            save_copy(self.decomposed_path, path)
        except OSError as e:
            message = f"Could not save '{path}': {e.strerror or e}. Choose a folder you can write to."
        else:
            message = f"Saved {path}"
            self.saved_decomposed = path
        self.status.emit(message)
        self.link_text.setText(message)
        return message


def _fraction(view: GraphView) -> tuple[float, float]:
    """Where a view's centre is across and down its scene, 0 to 1."""
    center = view.mapToScene(view.viewport().rect().center())
    s = view.sceneRect()
    return ((center.x() - s.left()) / s.width() if s.width() else 0.5,
            (center.y() - s.top()) / s.height() if s.height() else 0.5)


def program_shown(parent: QWidget) -> str | None:
    """The file of the program the window's Program menu acts on (`MainWindow.current_document`), when `parent` is
    the window: a dialog it asks for opens in that program's folder."""
    current = getattr(parent, "current_document", None)
    doc = current() if callable(current) else None
    return doc.model.archive.path if isinstance(doc, DocumentWidget) else None


def ask_comparison_target(parent: QWidget, others: dict[str, DocumentWidget]) -> DocumentWidget | str | None:
    """Ask which program to compare with: another open tab, or a file (the dialog opening in the current program's
    folder). Returns the document, a path, or None."""
    choices = list(others) + [OTHER_FILE]
    picked, ok = QInputDialog.getItem(parent, "Compare With", "Compare the current program with:", choices, 0, False)
    if not ok:
        return None
    if picked in others:
        return others[picked]
    return open_file(parent, "Compare With", program_shown(parent), "PyTorch programs (*.pt2 *.pte);;"
                     "PyTorch export archives (*.pt2);;ExecuTorch programs (*.pte)")
