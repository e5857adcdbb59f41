"""Under Inductor's output code in the trace view: its kernels linked to the FX nodes they compute, from the trace's
provenance (core/trace/kernel_code.py says what each place in the code computes). A table of the kernel calls in the
order they run, as the AOTInductor tab's Kernels page lists a package's (kernel, line, nodes); the kernel picked,
by a row or by the cursor in the code, with its nodes and their ops; and buttons that open the post-grad or the
Dynamo graph with those nodes selected.

`line_requested(int)`: a row picked, for the code to show that line. `nodes_requested(str, tuple)`: open the graph of
that kind ("post_grad", "dynamo") with these nodes selected. `kernel_shown(spans)`: the lines of the code where the
kernel picked is (its definition and calls; [] when none is picked), for the code to mark them."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QPushButton, QTreeWidgetItem, QVBoxLayout, QWidget

from pt2_viewer.app.panels import make_table
from pt2_viewer.app.qt import top_level_items
from pt2_viewer.core.trace.kernel_code import CodeLinks, KernelSite, LinkedKernel

ROLE = Qt.ItemDataRole.UserRole
NODES_SAID = 8  # of each graph, above the table (its row lists them all)
KERNEL_WIDTH = 280  # the kernel column's first width: a fused kernel's name is long, its nodes say more
DYNAMO_WIDTH = 200
GRAPH_BUTTONS = (("post_grad", "Open in the post-grad graph"), ("dynamo", "Open in the Dynamo graph"))


class KernelPanel(QWidget):
    line_requested = Signal(int)
    nodes_requested = Signal(str, object)
    kernel_shown = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.links: CodeLinks | None = None
        self.kernel: LinkedKernel | None = None
        self.table = make_table(["kernel", "call", "line", "post-grad nodes", "Dynamo nodes"], stretch_column=3)
        for column, width in ((0, KERNEL_WIDTH), (4, DYNAMO_WIDTH)):  # long names and lists: not as wide as they are
            self.table.header().setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(column, width)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setToolTip("Each kernel call of the code, in the order it runs, with the FX nodes it computes "
                              "(torch's provenance). Pick one, or click a kernel in the code")
        self.picked = QLabel("Click a kernel's definition or call in the code, or pick a row.")
        self.picked.setWordWrap(True)
        self.picked.setTextFormat(Qt.TextFormat.RichText)
        self.picked.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        for graph, text in GRAPH_BUTTONS:
            button = self.buttons[graph] = QPushButton(text)
            button.setToolTip("Open that graph in the graph view with this kernel's nodes selected")
            button.setEnabled(False)
            button.clicked.connect(lambda _=False, g=graph: self._open(g))
            row.addWidget(button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.picked)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)
        self.table.currentItemChanged.connect(lambda item, _old: self._row_picked(item))

    def show_links(self, links: CodeLinks | None) -> None:
        """The kernel calls of one output code (None: it has no provenance; the panel hides)."""
        self.links, self.kernel = links, None
        self.table.blockSignals(True)
        self.table.clear()
        for site in links.calls() if links is not None else []:
            linked = links.linked(site)  # type: ignore[union-attr]
            item = QTreeWidgetItem([site.kernel, str(site.handle), str(site.end), ", ".join(linked.post_grad),
                                    ", ".join(linked.pre_grad)])
            item.setData(0, ROLE, site)
            for column, text in ((0, site.kernel), (3, item.text(3)), (4, item.text(4))):
                item.setToolTip(column, text)  # elided in the middle where the column is narrow
            self.table.addTopLevelItem(item)
        self.table.blockSignals(False)
        self._show(None)
        self.setVisible(links is not None)

    def show_line(self, line: int) -> LinkedKernel | None:
        """The kernel named at `line` of the code (the cursor moved there): its nodes, and its row when it is a
        call. Elsewhere in the code, what was picked stays."""
        if self.links is None:
            return None
        site = next((s for s in self.links.sites if s.line <= line <= s.end), None)
        if site is None:
            return None
        self.table.blockSignals(True)
        row = next((i for i in top_level_items(self.table) if i.data(0, ROLE) == site), None)
        self.table.setCurrentItem(row)  # type: ignore[arg-type]  # None clears it: a definition is no one call
        self.table.blockSignals(False)
        return self._show(site)

    def _row_picked(self, item: QTreeWidgetItem | None) -> None:
        site = item.data(0, ROLE) if item is not None else None
        if isinstance(site, KernelSite):
            self._show(site)
            self.line_requested.emit(site.end)

    def _show(self, site: KernelSite | None) -> LinkedKernel | None:
        self.kernel = self.links.linked(site) if self.links is not None and site is not None else None
        if self.kernel is None:
            self.picked.setText("Click a kernel's definition or call in the code, or pick a row.")
        else:
            first, *rest = self.kernel.text(NODES_SAID).splitlines()
            self.picked.setText("<br>".join([f"<b>{escape(first)}</b>", *map(escape, rest)]))
            self.picked.setToolTip(self.kernel.text())
        for graph, button in self.buttons.items():
            button.setEnabled(self.kernel is not None and bool(self.kernel.nodes(graph)))
        self.kernel_shown.emit(self.links.spans(self.kernel) if self.links is not None and self.kernel else [])
        return self.kernel

    def _open(self, graph: str) -> None:
        if self.kernel is not None:
            self.nodes_requested.emit(graph, self.kernel.nodes(graph))
