"""The summary panel: the program's facts (torch and schema versions, dialect, node and op counts, weights), the op
histogram, and the archive's warnings and unknown fields, all from `pt2_viewer.core.graph.summary.program_summary`.

Clicking a bar of the histogram highlights the nodes of the graph shown that call that op.
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QScrollArea, QTreeWidgetItem, QVBoxLayout, QWidget

from pt2_viewer.app.panels import fixed_font, make_table
from pt2_viewer.app.panels.histogram import OpHistogram
from pt2_viewer.app.panels.panel import Panel
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.graph.summary import ProgramSummary, nodes_with_op, program_summary
from pt2_viewer.core.model.program import Graph
from pt2_viewer.core.util.words import plural

WARNING_COLOUR = "#b3261e"


class SummaryPanel(Panel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary: ProgramSummary | None = None
        self.graph: Graph | None = None
        self.facts = make_table(["", ""], stretch_column=1)
        self.facts.setHeaderHidden(True)
        self.facts.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.ops_title = QLabel()
        self.histogram = OpHistogram()
        self.histogram.op_clicked.connect(self._op_clicked)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.body = QWidget()
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.facts)
        layout.addWidget(self.notes)
        layout.addWidget(self.ops_title)
        layout.addWidget(self.histogram)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    def set_context(self, context: ProgramContext) -> None:
        program, graph, archive = context.program, context.graph, context.archive
        self.graph = graph
        self.summary = program_summary(archive, program)
        self.facts.clear()
        mono = fixed_font()
        bold = QFont(self.font())
        bold.setBold(True)
        for label, text in self.summary.facts():
            item = QTreeWidgetItem([label, text])
            item.setFont(0, bold)
            item.setFont(1, mono)
            item.setToolTip(1, text)
            self.facts.addTopLevelItem(item)
        rows = self.facts.topLevelItemCount()
        self.facts.setFixedHeight(rows * self.facts.sizeHintForRow(0) + 2 * self.facts.frameWidth() + 2)
        self.notes.setText(_notes_html(self.summary))
        self.notes.setVisible(bool(self.summary.warnings or self.summary.unknown_fields))
        self.ops_title.setText(f"<b>Operators</b> &nbsp; {plural(self.summary.op_count, 'call')}, "
                               f"{len(self.summary.histogram)} distinct (every graph, subgraphs included)")
        self.histogram.set_counts(self.summary.histogram)
        layout = self.body.layout()
        if layout is not None:
            layout.activate()

    def show_node(self, name: str | None) -> None:
        """The summary is about the whole program; a selection changes nothing here."""

    def _op_clicked(self, op: str) -> None:
        if self.graph is not None:
            self.nodes_highlighted.emit(nodes_with_op(self.graph, op))


def _notes_html(summary: ProgramSummary) -> str:
    parts = [f"<p style='color:{WARNING_COLOUR}'>⚠ {escape(w)}</p>" for w in summary.warnings]
    if summary.unknown_fields:
        parts.append("<p><b>Fields this viewer does not know</b> (kept as written):</p>")
        parts.extend(f"<p><code>{escape(k)}</code>: <code>{escape(v)}</code></p>"
                     for k, v in summary.unknown_fields.items())
    return "".join(parts)
