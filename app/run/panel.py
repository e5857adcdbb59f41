"""The Run tab of a document: run the program on CPU or CUDA in the worker and show what came out.

Inputs are the archive's sample inputs or generated ones, with a size for each dynamic dim (a small form built from
the program's symbols). Results: each output's dtype, shape, min, max, mean, NaN and Inf counts and first values; the
latency (median and spread); optional torch.compile and AOTInductor comparisons; per-node time, sent to the graph as a
heat overlay (`heat_changed`), with the hottest nodes listed. What the numbers mean is decided in
core/run/readout.py; this panel only lays them out and drives the job (app/jobs/driver.py), never blocking.

A `.pte` (the format registry says which) runs in ExecuTorch's runtime on CPU: its panel offers no torch.compile,
AOTInductor or CUDA. Run on CUDA is disabled, saying why, when torch in the worker sees no CUDA device: `CudaProbe`
asks the worker once, the first time a run panel is shown, and remembers the answer for the whole process.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
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
from pt2_viewer.app.jobs.preferences_dialog import worker_probes
from pt2_viewer.app.panels import fit_rows, narrow_combo
from pt2_viewer.app.run.worker_advice import with_advice
from pt2_viewer.app.widgets.file_dialogs import open_file
from pt2_viewer.core.formats.registry import PTE, recognise
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.import_policy import import_lines
from pt2_viewer.core.jobs.python_env import choose_worker
from pt2_viewer.core.jobs.remote.probe import RemoteProbe
from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.platform.trust import TrustStore
from pt2_viewer.core.run.dispatch import run_job_for
from pt2_viewer.core.run.readout import (
    CUDA_PROBE_REQUEST,
    CudaStatus,
    OutputRow,
    RunOptions,
    build_request,
    comparison_lines,
    cuda_status_of,
    dim_fields,
    failure_of,
    hottest,
    input_choices,
    latency_text,
    output_rows,
)

BAD_BRUSH = QBrush(theme.ALERT_ROW)
PTE_ON_CPU = "Run on CUDA is off: an ExecuTorch program runs on CPU here."
INPUT_CHOICES = input_choices("Generated inputs (sizes below)")


def spin_int(value: object, fallback: int) -> int:
    """What a QSpinBox takes (a C int) from a range read from a file: NaN, infinities and text from a damaged or
    hostile archive become `fallback`, huge values are clamped (a QSpinBox given them raises)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float)
                                                                          and not math.isfinite(value)):
        return fallback
    return int(max(-(2**31), min(2**31 - 1, value)))


class CudaProbe(QObject):
    """Whether torch in the worker sees a CUDA device: asked once per process, lazily, and remembered."""

    known = Signal(object)  # CudaStatus
    _shared: CudaProbe | None = None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status: CudaStatus | None = None
        self.python: str | None = None  # the worker (a local Python or an ssh:// URL) that gave `status`
        self.driver = WorkerDriver(self)
        self.driver.finished.connect(self._answered)
        self._tested: dict[str, CudaStatus] = {}  # Preferences' Test connection answers, per ssh:// worker
        worker_probes().probed.connect(self._tested_connection)
        for probe in list(worker_probes().answers.values()):
            self._tested_connection(probe)

    @classmethod
    def shared(cls) -> CudaProbe:
        if cls._shared is None:
            cls._shared = cls(QCoreApplication.instance())
        return cls._shared

    def ask(self) -> CudaStatus | None:
        """The answer when known; else None, and `known` follows once the worker answers (one job at most)."""
        worker = choose_worker().path
        if self.status is not None and self.python == worker:
            return self.status
        if worker in self._tested:  # Test connection in Preferences said it: no job needed
            self.python, self.status = worker, self._tested[worker]
            return self.status
        if not self.driver.running:  # never asked, or the user chose another worker in Preferences since
            self.python = worker
            self.driver.start("run_program", CUDA_PROBE_REQUEST, temp_dirs.new_dir("cuda-probe"))
        return None

    def _answered(self, outcome: JobOutcome) -> None:
        status = cuda_status_of(outcome.result_as(RunResult))
        self.learn(status or CudaStatus(False, f"the worker could not ask torch ({outcome.message})"))

    def learn(self, status: CudaStatus) -> None:
        self.status = status
        self.python = self.python or choose_worker().path
        self.known.emit(status)

    def _tested_connection(self, probe: RemoteProbe) -> None:
        """A remote worker's answer to Test connection: whether its torch sees a CUDA device, for that worker."""
        available, reason = probe.cuda()
        self._tested[probe.url] = CudaStatus(available, reason)
        if probe.url == choose_worker().path and not self.driver.running:
            self.python = probe.url
            self.learn(self._tested[probe.url])

    def forget(self) -> None:
        """Ask again next time (the worker's Python was changed in Preferences)."""
        if not self.driver.running:
            self.status = None


class RunPanel(QScrollArea):
    """Emits `heat_changed({node: seconds})` after a run with per-node times, `node_requested(name)` when a hottest
    node is clicked, and `finished(result | None)` when a run ends (None when the worker itself failed)."""

    heat_changed = Signal(dict)
    node_requested = Signal(str)
    nodes_requested = Signal(list, int)  # a hottest node clicked: go through the hottest, starting at this one
    finished = Signal(object)

    def __init__(self, program_path: str, program: Program, trust: TrustStore | None = None,
                 interactive: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.program_path = program_path
        self.program = program
        # an ExecuTorch program runs in ExecuTorch's runtime (the run_pte job), on CPU: torch.compile, AOTInductor
        # and CUDA do not apply to it (the format registry says what the file is)
        self.executorch = recognise(program_path) is PTE
        self.trust = trust or TrustStore.default()
        self.interactive = interactive  # False for --screenshot and tests: no modal dialogs
        self.driver = WorkerDriver(self, warm=program_path, hold=True)  # its worker lives while the tab does
        self.result: RunResult | None = None
        self.log: list[str] = []
        self._asked_cuda = False
        self.setWidgetResizable(True)
        # Text wraps and tables scroll, so the body fits the panel's width; a word longer than the panel (a module
        # path) still reaches through a scroll bar instead of cutting the buttons and the latency line.
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        body = QWidget()
        self.setWidget(body)
        v = QVBoxLayout(body)

        # inputs
        inputs = QGroupBox("Inputs")
        form = QFormLayout(inputs)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a long dims label puts its field below it
        self.input_mode = narrow_combo()
        for key, text in INPUT_CHOICES:
            self.input_mode.addItem(text, key)
        if not program.has_sample_inputs:
            self.input_mode.setCurrentIndex(2)
            self.input_mode.setToolTip("This archive holds no sample inputs: inputs are generated")
        form.addRow("Use", self.input_mode)
        self.dims: dict[str, QSpinBox] = {}
        for f in dim_fields(program):
            low = spin_int(f.minimum, 0)
            high = max(spin_int(f.maximum, low), low)
            spin = QSpinBox(minimum=low, maximum=high, value=min(max(spin_int(f.default, low), low), high))
            spin.setToolTip(f.range_text)
            self.dims[f.symbol] = spin
            form.addRow(f.label, spin)
        if not self.dims:
            form.addRow(QLabel("Every input size is static."))
        self.seed = QSpinBox(minimum=0, maximum=2**31 - 1)
        form.addRow("Seed", self.seed)
        v.addWidget(inputs)

        # options
        options = QGroupBox("Options")
        of = QFormLayout(options)
        self.warmup = QSpinBox(minimum=0, maximum=1000, value=3)
        self.runs = QSpinBox(minimum=1, maximum=10000, value=10)
        of.addRow("Warm-up runs", self.warmup)
        of.addRow("Timed runs", self.runs)
        self.node_times = QCheckBox("Time each node (heat overlay on the graph)")
        self.node_times.setChecked(True)
        self.compile = QCheckBox("Compare with torch.compile (slow on CPU)")
        self.aoti = QCheckBox("Compile and run with AOTInductor")
        self.aoti_path = QLineEdit(placeholderText="where to save the package (default: a temporary folder)")
        self.aoti_browse = QPushButton("Save as…")
        self.preload = QLineEdit(placeholderText="optional: a .py file to import first (custom op definitions)")
        self.preload_browse = QPushButton("Browse…")
        of.addRow(self.node_times)
        if self.executorch:
            of.addRow(QLabel("Runs the method with ExecuTorch's runtime, on CPU."))
        else:
            of.addRow(self.compile)
            of.addRow(self.aoti)
            of.addRow("AOTI package", file_row(self.aoti_path, self.aoti_browse))
        of.addRow("Import first", file_row(self.preload, self.preload_browse))
        v.addWidget(options)

        # buttons and progress
        self.cpu_button = QPushButton("Run on CPU")
        self.cuda_button = QPushButton("Run on CUDA")
        self.cuda_button.setEnabled(False)
        self.cuda_button.setToolTip("Asking the worker whether torch sees a CUDA device…")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        buttons = QHBoxLayout()
        for b in (self.cpu_button, self.cuda_button, self.cancel_button):
            buttons.addWidget(b)
        v.addLayout(buttons)
        self.cuda_reason = QLabel("")
        self.cuda_reason.setWordWrap(True)
        self.cuda_reason.setStyleSheet("color: #666")
        v.addWidget(self.cuda_reason)
        self.stage = QLabel("")  # "Ran on cpu…" and one line per module imported ("imported transformers…")
        self.stage.setWordWrap(True)
        self.stage.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setVisible(False)
        v.addWidget(self.stage)
        v.addWidget(self.progress)

        # results
        self.failure = FailureBox(160)
        self.error = self.failure.error
        self.latency = QLabel("")
        self.latency.setWordWrap(True)
        self.latency.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.comparisons = QLabel("")
        self.comparisons.setWordWrap(True)
        self.comparisons.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outputs = QTableWidget(0, len(OutputRow.COLUMNS))
        self.outputs.setHorizontalHeaderLabels(OutputRow.COLUMNS)
        self.outputs.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.outputs.verticalHeader().setVisible(False)
        self.outputs.horizontalHeader().setSectionResizeMode(len(OutputRow.COLUMNS) - 1,
                                                             QHeaderView.ResizeMode.Stretch)
        self.outputs.setMinimumHeight(120)
        self.hot = QListWidget()
        self.hot.setMinimumHeight(120)
        self.hot.setToolTip("Slowest nodes (least of 3 runs); click one to show it in the graph")
        for widget in (self.failure, self.latency, self.comparisons, QLabel("<b>Outputs</b>"), self.outputs,
                       QLabel("<b>Hottest nodes</b>"), self.hot):
            v.addWidget(widget)
        v.addStretch(1)

        self.input_mode.currentIndexChanged.connect(lambda _i: self._update_enabled())
        self.cpu_button.clicked.connect(lambda: self.run("cpu"))
        self.cuda_button.clicked.connect(lambda: self.run("cuda"))
        self.cancel_button.clicked.connect(self.cancel)
        self.aoti_browse.clicked.connect(self._choose_package)
        self.preload_browse.clicked.connect(self._choose_preload)
        self.hot.itemClicked.connect(lambda it: self.nodes_requested.emit(
            [self.hot.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.hot.count())], self.hot.row(it)))
        self.driver.event.connect(self._event)
        self.driver.output.connect(lambda _stream, line: self.log.append(line))
        self.driver.finished.connect(self._finished)
        CudaProbe.shared().known.connect(self._cuda_known)
        self._update_enabled()

    # -- CUDA, asked lazily --------------------------------------------------------------------------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.executorch:
            self.cuda_button.setToolTip(PTE_ON_CPU)
            self.cuda_reason.setText(PTE_ON_CPU)
        elif not self._asked_cuda:
            self._asked_cuda = True
            status = CudaProbe.shared().ask()
            if status is not None:
                self._cuda_known(status)

    def _cuda_known(self, status: CudaStatus) -> None:
        if self.executorch:
            return
        self.cuda_button.setEnabled(status.available and not self.driver.running)
        self.cuda_button.setToolTip(with_advice(status.button_tip()))
        self.cuda_reason.setText("" if status.available else with_advice(f"Run on CUDA is off: {status.reason}."))

    # -- choices -------------------------------------------------------------------------------------------------
    def _update_enabled(self) -> None:
        generated = self.input_mode.currentData() == "generated"
        for spin in self.dims.values():
            spin.setEnabled(generated)
        self.seed.setEnabled(generated)

    def _choose_package(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the AOTInductor package",
                                              str(Path(self.program_path).with_suffix(".aoti.pt2")),
                                              "AOTInductor packages (*.pt2)")
        if path:
            self.aoti_path.setText(path)
            self.aoti.setChecked(True)

    def _choose_preload(self) -> None:
        path = open_file(self, "Python file to import first", self.program_path, PY_FILTER)  # beside the program
        if path:
            self.preload.setText(path)

    def options(self, device: str) -> RunOptions:
        return RunOptions(device=device, inputs=str(self.input_mode.currentData()),
                          dims={s: spin.value() for s, spin in self.dims.items()}, seed=self.seed.value(),
                          warmup=self.warmup.value(), runs=self.runs.value(), node_times=self.node_times.isChecked(),
                          compile=self.compile.isChecked(), aoti=self.aoti.isChecked(),
                          aoti_package=self.aoti_path.text().strip() or None,
                          preload=self.preload.text().strip() or None)

    # -- running -------------------------------------------------------------------------------------------------
    def run(self, device: str) -> None:
        if self.driver.running:
            return
        options = self.options(device)
        if options.preload:
            p = Path(options.preload).expanduser()
            refused = (f"The import-first file '{options.preload}' does not exist." if not p.is_file()
                       else confirm_code(self, p, self.trust, self.interactive, "the import-first file"))
            if refused:
                self._show_failure(refused, "")
                return
        request = build_request(self.program_path, self.program.name, options)
        self._clear_results()
        self.stage.setText(f"Starting the worker ({device})…")
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self._set_running(True)
        self.log = []
        self.driver.start(run_job_for(self.program_path), request, temp_dirs.new_dir("run"))  # .pte: run_pte

    def cancel(self) -> None:
        self.driver.cancel()

    def _set_running(self, running: bool) -> None:
        self.cpu_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        status = CudaProbe.shared().status
        self.cuda_button.setEnabled(not running and not self.executorch and status is not None and status.available)

    def _event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "progress":
            self.progress.setValue(int(float(event.get("fraction", 0.0)) * 100))
            self.stage.setText(str(event.get("message", "")))

    def _clear_results(self) -> None:
        self.failure.clear()
        self.latency.setText("")
        self.comparisons.setText("")
        self.outputs.setRowCount(0)
        self.hot.clear()

    def _finished(self, outcome: JobOutcome) -> None:
        self.progress.setVisible(False)
        result = outcome.result_as(RunResult) if outcome.ok else None
        self.result = result
        status = cuda_status_of(result)
        if status is not None and status != CudaProbe.shared().status:
            CudaProbe.shared().learn(status)
        self._set_running(False)
        if result is None:
            self.stage.setText(with_advice(outcome.message))
            self._show_failure(outcome.message, outcome.error_traceback or "")
        else:
            self.show_result(result)
        self.finished.emit(result)

    def show_result(self, result: RunResult) -> None:
        """Fill the panel from a run job's result (a failed one shows its failure, and whatever ran before it)."""
        failure = failure_of(result)
        if failure is not None:
            self.stage.setText("The run failed.")
            detail = "\n".join(part for part in (failure.detail, *result.log) if part)
            self._show_failure(failure.text(log="below" if detail else ""), detail)
        else:
            where = result.device or "cpu"
            source = result.inputs.source if result.inputs is not None else ""
            self.stage.setText("\n".join([f"Ran on {where} with {source} inputs.", *import_lines(result.imports)]))
        if result.latency is not None:
            self.latency.setText(f"<b>Latency</b>: {latency_text(result.latency)}")
        self.comparisons.setText("\n".join(comparison_lines(result)))
        rows = output_rows(result)
        self.outputs.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row.cells()):
                item = QTableWidgetItem(text)
                if row.bad:
                    item.setBackground(BAD_BRUSH)
                self.outputs.setItem(r, c, item)
        self.outputs.resizeColumnsToContents()
        for node in hottest(result):
            it = QListWidgetItem(node.text())
            it.setData(Qt.ItemDataRole.UserRole, node.node)
            self.hot.addItem(it)
        fit_rows(self.hot)
        if result.node_times:
            self.heat_changed.emit(dict(result.node_times))

    def _show_failure(self, message: str, detail: str) -> None:
        self.failure.show_failure(with_advice(message), detail, self.log)
