"""The Numerics tab of a document: compare the program with a candidate (a decomposition, bf16/fp16, CUDA,
torch.compile, AOTInductor, ONNX, or a file it became: a .pte, a package, a .onnx) node by node in the worker, and
show where its numbers go wrong.

Choices: the candidate (and a table file), the inputs, the threshold. Results: a summary (first divergence, memory
used), a table of every compared node sorted by error (the first divergence in bold, nodes over the threshold tinted;
click one to show it in the graph), a "Go to first divergence" button, and the error painted on the graph as an
overlay (`overlay_changed`). For a decomposition, "Compare at first divergence" asks for the compare view opened on it
(`compare_requested(Decomposition, node)`; the job saved the candidate and its node mapping in its own folder, which
the Decomposition says the comparison must leave alone). What the numbers mean is
decided in core/numerics/readout.py; this panel lays them out and drives the job (app/jobs/driver.py), never blocking.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app import theme
from pt2_viewer.app.jobs.driver import WorkerDriver
from pt2_viewer.app.jobs.job_widgets import PY_FILTER, FailureBox, confirm_code, file_row
from pt2_viewer.app.panels import narrow_combo
from pt2_viewer.app.platform.trust_dialog import confirm_native
from pt2_viewer.app.qt import push_button
from pt2_viewer.app.widgets.file_dialogs import open_file
from pt2_viewer.core.compare.decomposition import Decomposition
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.import_policy import import_lines
from pt2_viewer.core.jobs.schemas.numerics import NumericsResult
from pt2_viewer.core.model.program import NodeOp, Program
from pt2_viewer.core.numerics.metrics import DEFAULT_THRESHOLD
from pt2_viewer.core.numerics.readout import (
    CANDIDATE_CHOICES,
    ErrorRow,
    NumericsOptions,
    build_request,
    error_overlay,
    error_rows,
    first_divergence,
    parse_threshold,
    summary_text,
)
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.platform.trust import TrustStore
from pt2_viewer.core.run.readout import input_choices

OVER_BRUSH = QBrush(theme.ALERT_ROW)
INPUT_CHOICES = input_choices("Generated inputs (as Run makes them)")


LOWERED_FILTER = "ExecuTorch programs, AOTInductor packages and ONNX models (*.pte *.pt2 *.onnx)"


@dataclass(frozen=True)
class FileField:
    """What the file row says for a candidate that needs a file: its label, its empty text, its dialog's title and
    filter (a `.pte` candidate's row said "Table", "a .py file defining a decomposition table")."""

    label: str
    placeholder: str
    title: str
    filter: str


FILE_FIELDS = {
    "table": FileField("Table", "a .py file defining a decomposition table", "Decomposition table", PY_FILTER),
    "lowered": FileField("Lowered file", "a .pte (its ETRecord beside it), an AOTInductor package (.pt2) or a .onnx",
                         "What the program became: a .pte, an AOTInductor package or an ONNX model", LOWERED_FILTER),
}
NO_FILE = FileField("File", "no file for this candidate", "", "")
NAME_CHARS = 24  # the least of a node name the table shows before it scrolls sideways


class NumericsPanel(QScrollArea):
    """Emits `overlay_changed(Overlay | None)`, `node_requested(name)` and `compare_requested(Decomposition, node)`."""

    overlay_changed = Signal(object)
    node_requested = Signal(str)
    compare_requested = Signal(object, str)  # core/compare/decomposition.Decomposition, the first divergence
    finished = Signal(object)
    nodes_requested = Signal(list, int)  # go through these nodes (the table's order), starting at this one
    cuda_asked = Signal()  # first shown: whoever knows the worker's CUDA answers with `set_cuda` (as Run asks)

    def __init__(self, program_path: str, program: Program, trust: TrustStore | None = None,
                 interactive: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.program_path = program_path
        self.program = program
        self.trust = trust or TrustStore.default()
        self.interactive = interactive
        self.driver = WorkerDriver(self, warm=program_path)
        self.result: NumericsResult | None = None
        self.rows: list[ErrorRow] = []
        self.placeholders = {n.name for n in program.graph.nodes if n.op is NodeOp.PLACEHOLDER}
        self.log: list[str] = []
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        self.setWidget(body)
        v = QVBoxLayout(body)

        choices = QGroupBox("Compare with")
        form = QFormLayout(choices)
        self.candidate = narrow_combo()
        for key, text in CANDIDATE_CHOICES:
            self.candidate.addItem(text, key)
        form.addRow("Candidate", self.candidate)
        self.table_path = QLineEdit()
        self.table_browse = QPushButton("Browse…")
        self.file_label = QLabel()  # named for the candidate chosen (FILE_FIELDS)
        form.addRow(self.file_label, file_row(self.table_path, self.table_browse))
        self.input_mode = narrow_combo()
        for key, text in INPUT_CHOICES:
            self.input_mode.addItem(text, key)
        if not program.has_sample_inputs:
            self.input_mode.setCurrentIndex(2)
        form.addRow("Inputs", self.input_mode)
        self.seed = QSpinBox(minimum=0, maximum=2**31 - 1)
        form.addRow("Seed", self.seed)
        self.threshold = QLineEdit(f"{DEFAULT_THRESHOLD:g}")
        self.threshold.setToolTip("A node diverges when max|ref - cand| / max|ref| passes this")
        form.addRow("Threshold", self.threshold)
        v.addWidget(choices)

        self.compare_button = QPushButton("Compare")
        self.cancel_button = push_button("Cancel", enabled=False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.compare_button)
        buttons.addWidget(self.cancel_button)
        v.addLayout(buttons)
        self.stage = QLabel("")
        self.stage.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setVisible(False)
        v.addWidget(self.stage)
        v.addWidget(self.progress)

        self.failure = FailureBox(160)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.go_first = push_button("Go to first divergence", enabled=False)
        self.open_compare = push_button("Compare view at first divergence", enabled=False)
        self.open_compare.setToolTip("For a decomposition: open the reference and the candidate side by side, both "
                                     "sides selected at the first divergence")
        go = QHBoxLayout()
        go.addWidget(self.go_first)
        go.addWidget(self.open_compare)
        self.table = QTableWidget(0, len(ErrorRow.COLUMNS))
        self.table.setHorizontalHeaderLabels(ErrorRow.COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideLeft)  # a long name keeps its distinguishing end
        self.table.setHorizontalScrollMode(QTableWidget.ScrollMode.ScrollPerPixel)
        self.table.setMinimumHeight(220)
        for w in (self.failure, self.summary):
            v.addWidget(w)
        v.addLayout(go)
        v.addWidget(QLabel("<b>Nodes by error</b> (click one to show it in the graph)"))
        v.addWidget(self.table, 1)

        self.candidate.currentIndexChanged.connect(lambda _i: self._update_enabled())
        self.input_mode.currentIndexChanged.connect(lambda _i: self._update_enabled())
        self.table_browse.clicked.connect(self._choose_table)
        self.compare_button.clicked.connect(self.compare)
        self.cancel_button.clicked.connect(self.cancel)
        self.go_first.clicked.connect(self.go_to_first_divergence)
        self.open_compare.clicked.connect(self._ask_compare)
        self.table.cellClicked.connect(lambda r, _c: self._go_through(r))
        self.driver.event.connect(self._event)
        self.driver.output.connect(lambda _stream, line: self.log.append(line))
        self.driver.finished.connect(self._finished)
        self._asked_cuda = False
        self._cuda_item().setEnabled(False)  # offered once the worker's torch says it has a device
        self._cuda_item().setToolTip("Asking the worker whether torch sees a CUDA device…")
        self._update_enabled()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._asked_cuda:
            self._asked_cuda = True
            self.cuda_asked.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    # -- choices ---------------------------------------------------------------------------------------------------
    def _update_enabled(self) -> None:
        field = self._file_field()
        table = field is not NO_FILE  # a file: a table, or a .pte / package
        self.table_path.setEnabled(table)
        self.table_browse.setEnabled(table)
        self.file_label.setText(field.label)
        self.table_path.setPlaceholderText(field.placeholder)
        self.seed.setEnabled(self.input_mode.currentData() == "generated")

    def _file_field(self) -> FileField:
        return FILE_FIELDS.get(str(self.candidate.currentData()), NO_FILE)

    def _choose_table(self) -> None:
        field = self._file_field()
        path = open_file(self, field.title, self.program_path, field.filter)  # beside the program
        if path:
            self.table_path.setText(path)

    def set_candidate(self, key: str, table: str | None = None) -> None:
        self.candidate.setCurrentIndex(max(self.candidate.findData(key), 0))
        if table:
            self.table_path.setText(table)

    def options(self) -> NumericsOptions | str:
        """The choices as options, or what is wrong with them."""
        threshold = parse_threshold(self.threshold.text())
        if threshold is None:
            return f"The threshold '{self.threshold.text()}' is not a non-negative number (e.g. 0.01 or 1e-3)."
        key = str(self.candidate.currentData())
        table = self.table_path.text().strip() or None
        if key == "table":
            if not table or not Path(table).expanduser().is_file():
                return (f"The table file '{table or ''}' does not exist: choose a .py file defining a decomposition "
                        "table.")
            refused = confirm_code(self, Path(table).expanduser(), self.trust, self.interactive, "the table file")
            if refused:
                return refused
        if key == "lowered":
            if not table or not Path(table).expanduser().is_file():
                return (f"The file '{table or ''}' does not exist: choose a .pte, an AOTInductor package (.pt2) or "
                        "an ONNX model (.onnx).")
            if table.endswith(".pt2") and not confirm_native(self, Path(table).expanduser(), self.trust,
                                                             interactive=self.interactive):
                return "The package's compiled code was not run: loading it runs it, with your permissions."
        return NumericsOptions(candidate=key, table=str(Path(table).expanduser()) if key in ("table", "lowered")
                               and table else None,
                               inputs=str(self.input_mode.currentData()), seed=self.seed.value(), threshold=threshold)

    # -- running ---------------------------------------------------------------------------------------------------
    def compare(self) -> None:
        if self.driver.running:
            return
        options = self.options()
        if isinstance(options, str):
            self.failure.show_failure(options, "", [])
            return
        self._clear()
        self.stage.setText("Starting the worker…")
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self._set_running(True)
        self.log = []
        self.driver.start("numerics", build_request(self.program_path, self.program.name, options),
                          temp_dirs.new_dir("numerics"))

    def cancel(self) -> None:
        self.driver.cancel()

    def _set_running(self, running: bool) -> None:
        self.compare_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    def _event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "progress":
            self.progress.setValue(int(float(event.get("fraction", 0.0)) * 100))
            self.stage.setText(str(event.get("message", "")))

    def _clear(self) -> None:
        self.failure.clear()
        self.summary.setText("")
        self.table.setRowCount(0)
        self.rows = []
        self.go_first.setEnabled(False)
        self.open_compare.setEnabled(False)
        self.overlay_changed.emit(None)

    def _finished(self, outcome: JobOutcome) -> None:
        self.progress.setVisible(False)
        self._set_running(False)
        failed = outcome.failure_text()
        self.result = outcome.result_as(NumericsResult) if outcome.ok else None
        if failed is not None or self.result is None:
            if self.result is not None:
                self._learn_cuda(self.result)
            self.stage.setText("The comparison did not run." if outcome.status != "cancelled" else outcome.message)
            self.failure.show_failure(*(failed or (outcome.message, "")), self.log)
        else:
            self.show_result(self.result)
        self.finished.emit(self.result)

    def show_result(self, result: NumericsResult) -> None:
        """Fill the tab from a numerics job's result and paint its errors on the graph."""
        self.result = result
        self.stage.setText("\n".join(import_lines(result.imports)))  # as the Run tab says it
        self.summary.setText(summary_text(result))
        self.rows = error_rows(result, self.placeholders)
        self.table.setRowCount(len(self.rows))
        for r, row in enumerate(self.rows):
            for c, text in enumerate(row.cells()):
                item = QTableWidgetItem(text)
                if c == 0:
                    item.setToolTip(text)
                if row.over:
                    item.setBackground(OVER_BRUSH)
                if row.first:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                    item.setToolTip("The first divergence: over the threshold while its inputs are within it")
                self.table.setItem(r, c, item)
        self._fit_columns()
        self._learn_cuda(result)
        first = first_divergence(result)
        self.go_first.setEnabled(first is not None)
        self.open_compare.setEnabled(first is not None and bool(result.candidate_program))
        self.overlay_changed.emit(error_overlay(result))

    def _fit_columns(self) -> None:
        """The figures at their text's width; the candidate column only where it says something the node column
        does not (bf16, fp16 and cuda compare a node with its namesake), the note, NaN and Inf columns only when a
        row has something to say there. The name columns get the rest: whole names where they fit, else at least
        `NAME_CHARS` characters elided at the left (`…h_11_attn_c_attn_weight` keeps what tells one weight from the
        next; the whole name is in the tooltip), and the table scrolls sideways rather than cut every name to
        `p_tran…weight`."""
        t = self.table
        cols = ErrorRow.COLUMNS
        node_c, cand_c = cols.index("node"), cols.index("candidate")
        t.setColumnHidden(cand_c, all(r.error.candidate == r.error.node for r in self.rows))
        t.setColumnHidden(cols.index("note"), not any(r.error.note for r in self.rows))
        t.setColumnHidden(cols.index("NaN"), not any(r.error.nan for r in self.rows))
        t.setColumnHidden(cols.index("Inf"), not any(r.error.inf for r in self.rows))
        header = t.horizontalHeader()
        header.setStretchLastSection(False)
        names = [c for c in (node_c, cand_c) if not t.isColumnHidden(c)]
        figures = [c for c in range(len(cols)) if c not in names and not t.isColumnHidden(c)]
        for c in figures:
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        used = sum(max(t.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in figures)
        share = (t.viewport().width() - used) // max(len(names), 1)
        floor = t.fontMetrics().horizontalAdvance("x" * NAME_CHARS)
        for c in names:
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            need = max(t.sizeHintForColumn(c), header.sectionSizeHint(c))
            header.resizeSection(c, min(need, max(share, floor)))

    def _cuda_item(self) -> Any:
        return self.candidate.model().item(self.candidate.findData("cuda"))  # type: ignore[attr-defined]

    def set_cuda(self, available: bool, reason: str) -> None:
        """Offer the cuda candidate only where the worker's torch has a device (Run asks the same question)."""
        item = self._cuda_item()
        item.setEnabled(available)
        item.setToolTip("The same program on the GPU" if available else f"CUDA is not available: {reason}")
        if not available and self.candidate.currentData() == "cuda":
            self.candidate.setCurrentIndex(0)

    def _learn_cuda(self, result: NumericsResult) -> None:
        """Every result says whether the worker's torch sees CUDA: without it the cuda candidate is disabled, saying
        why."""
        if result.cuda_available is False:
            self.set_cuda(False, result.cuda_unavailable_reason or "")

    def _go_through(self, row: int) -> None:
        """Show the row's node in the graph, with next/previous through the rows in the table's order."""
        self.nodes_requested.emit([r.error.node for r in self.rows], row)

    def go_to_first_divergence(self) -> None:
        first = first_divergence(self.result)
        if first:
            for r, row in enumerate(self.rows):
                if row.first:
                    self.table.selectRow(r)
                    self._go_through(r)
                    return
            self.node_requested.emit(first)

    def _ask_compare(self) -> None:
        first = first_divergence(self.result)
        if not first or not self.result:
            return
        decomposition = Decomposition.from_numerics(self.result)
        if decomposition is not None:
            self.compare_requested.emit(decomposition, first)
