"""Program > Lower to ExecuTorch…: pick a backend (XNNPACK or portable kernels), run the worker's `lower` job with
progress and Cancel, then paint the source delegated / not delegated (the reason in Details and the tooltip), list
"not delegated: op, reason, count" (a click reveals the nodes), and hand the `.pte` on to open beside its source,
linked through the ETRecord's debug handles (core/deploy/delegation.py).

The `.pte` and its ETRecord are written into the job's temporary folder, which goes when the app quits: "Save .pte
As…" here, or File > Save Program As… on the lowered tab, saves both where the user wants (app/deploy/pte_saving.py,
the ETRecord beside the `.pte` as `numerics` and `run` look for it), and closing that tab unsaved asks first.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.deploy.pte_saving import LoweredFiles, ask_and_save_pte
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.loader import ArchiveLoader
from pt2_viewer.app.jobs.job_widgets import JobDialog
from pt2_viewer.app.panels import make_table
from pt2_viewer.app.widgets.common import radio_column
from pt2_viewer.core.deploy.delegation import delegation_overlay, on_pte_graph, reason_rows, summary
from pt2_viewer.core.graph.overlays import run_time_overlay
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.base import Schema
from pt2_viewer.core.jobs.schemas.lower import LowerRequest, LowerResult
from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest, NumericsResult
from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.numerics.readout import error_overlay, summary_text
from pt2_viewer.core.platform import temp_dirs

BACKENDS = (("xnnpack", "XNNPACK where its partitioner takes an op, portable kernels elsewhere"),
            ("portable", "Portable kernels only"))
NODES_ROLE = Qt.ItemDataRole.UserRole


class LowerDialog(JobDialog):
    """Emits `lowered(result, archive)` when the job succeeded and its `.pte` was read (its files in `files`, which
    the lowered tab shares: saved from either, neither asks again), `failed(message)` when it did not."""

    lowered = Signal(object, object)
    failed = Signal(str)

    def __init__(self, doc: DocumentWidget, interactive: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.program_path = doc.model.archive.path
        self.program_name = doc.model.program.name
        self.setWindowTitle(f"Lower {Path(self.program_path).name} to ExecuTorch")
        self.interactive = interactive
        self.make_driver(self.program_path)
        self.job = "lower"
        self.lowered_result: LowerResult | None = None
        self.files: LoweredFiles | None = None  # the last lowering's .pte and ETRecord, and where they were saved

        self.backend_buttons, backends = radio_column(self, BACKENDS, "backend", checked=0)
        self.make_job_widgets("Lower")
        self.table = make_table(["not delegated: op", "reason", "count"], stretch_column=1)
        self.table.setVisible(False)
        self.table.itemClicked.connect(self._clicked)
        self.numbers_button = QPushButton("Compare Numbers")
        self.numbers_button.setToolTip("Run the .pte with ETDump and compare each op with the source (numerics)")
        self.times_button = QPushButton("Time Each Op")
        self.times_button.setToolTip("Run the .pte with ETDump and time each instruction and delegate call")
        self.save_button = QPushButton("Save .pte As…")
        self.save_button.setToolTip("Save the .pte where you choose, its ETRecord beside it (NAME.etrecord), so "
                                    "numerics and run find it; the lowered files are deleted when the app quits")
        for button in (self.numbers_button, self.times_button, self.save_button):
            button.setEnabled(False)
        self.sides: tuple[DocumentWidget, DocumentWidget] | None = None  # the comparison's source and .pte
        buttons = QHBoxLayout()
        buttons.addWidget(self.numbers_button)
        buttons.addWidget(self.times_button)
        buttons.addStretch(1)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.close_button)
        v = QVBoxLayout(self)
        v.addWidget(QLabel(f"<b>{Path(self.program_path).name}</b> [{self.program_name}]"))
        v.addLayout(backends)
        v.addWidget(self.stage)
        v.addWidget(self.progress)
        v.addWidget(self.failure)
        v.addWidget(self.table, 1)
        v.addLayout(buttons)
        self.resize(720, 420)
        self.start_button.clicked.connect(self.start)
        self.numbers_button.clicked.connect(self.compare_numbers)
        self.times_button.clicked.connect(self.time_ops)
        self.save_button.clicked.connect(self.save_dialog)

    def backend(self) -> str:
        button = self.backend_buttons.checkedButton()
        return str(button.property("backend")) if button is not None else "xnnpack"

    def set_backend(self, key: str) -> None:
        for b in self.backend_buttons.buttons():
            b.setChecked(b.property("backend") == key)

    def start(self) -> None:
        if self.driver.running:
            return
        self.out_dir = temp_dirs.new_dir("lower")
        backend = self.backend()
        request = LowerRequest(program=self.program_path, program_name=self.program_name, to=backend,
                               output=str(self.out_dir / f"{Path(self.program_path).stem}.{backend}.pte"))
        self.table.setVisible(False)
        self.job_started()
        self.driver.start("lower", request, self.out_dir)

    def attach(self, source: DocumentWidget, pte: DocumentWidget) -> None:
        """The comparison's two graphs: where the per-op error and time overlays are painted."""
        self.sides = (source, pte)
        for button in (self.numbers_button, self.times_button):
            button.setEnabled(True)

    def compare_numbers(self) -> None:
        if self.lowered_result is not None:
            self._follow_up("numerics", NumericsRequest(
                program=self.program_path, program_name=self.program_name,
                candidate=str(self.lowered_result.pte), etrecord=self.lowered_result.etrecord))

    def time_ops(self) -> None:
        if self.lowered_result is not None:
            self._follow_up("run_pte", ArtifactRunRequest(
                program=self.lowered_result.pte, source=self.program_path, node_times=True, warmup=1, runs=3,
                etrecord=self.lowered_result.etrecord))

    def _follow_up(self, job: str, request: Schema) -> None:
        if self.driver.running:
            return
        self.job = job
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.failure.clear()
        self.driver.start(job, request, temp_dirs.new_dir(job))

    def _painted(self, job: str, outcome: JobOutcome) -> None:
        """Paint a follow-up's per-op figures on both graphs."""

        assert self.sides is not None
        source, pte = self.sides
        numerics = outcome.result_as(NumericsResult) if job == "numerics" else None
        run = outcome.result_as(RunResult) if job != "numerics" else None
        if numerics is not None:
            pairs = [(source, error_overlay(numerics)), (pte, error_overlay(on_pte_graph(numerics)))]
            self.stage.setText(summary_text(numerics))
        elif run is not None:
            pairs = [(source, run_time_overlay(run.source_node_times or {})),
                     (pte, run_time_overlay(run.node_times or {}))]
            self.stage.setText(f"Timed {len(run.node_times or {})} instructions and delegate calls.")
        else:
            return
        for doc, overlay in pairs:
            if overlay is not None:
                doc.tools.add_overlay(overlay)

    def _finished(self, outcome: JobOutcome) -> None:
        job, self.job = self.job, "lower"
        if job != "lower":
            self.progress.setVisible(False)
            failure = outcome.failure_text()
            if failure is not None:
                self.failure.show_failure(*failure, self.log)
            else:
                self._painted(job, outcome)
            return
        self.job_ended()
        result = self.read_result(outcome, LowerResult)
        if result is None:
            return
        self.lowered_result = result
        self.files = LoweredFiles(Path(result.pte or ""), Path(result.etrecord) if result.etrecord else None)
        self.save_button.setEnabled(True)
        self.show_result(result)
        loader = ArchiveLoader(self)
        loader.loaded.connect(lambda _path, archive: self._read(result, archive))
        loader.failed.connect(lambda _path, message: self._fail(f"The .pte cannot be read: {message}", ""))
        loader.load(str(result.pte))

    def show_result(self, result: LowerResult) -> None:
        """Paint the source and fill the table "not delegated: op, reason, count"."""
        self.doc.tools.add_overlay(delegation_overlay(result))
        self.stage.setText(summary(result))
        self.table.clear()
        for row in reason_rows(result.not_delegated or []):
            item = QTreeWidgetItem([row.op, row.reason, str(row.count)])
            item.setToolTip(1, row.reason)
            item.setData(0, NODES_ROLE, row.nodes)
            self.table.addTopLevelItem(item)
        self.table.setVisible(self.table.topLevelItemCount() > 0)

    def save_dialog(self) -> list[Path]:
        """Save .pte As…: the lowered `.pte` and its ETRecord where the user chooses (offered beside the source)."""
        if self.files is None:
            return []
        written, message = ask_and_save_pte(self, self.files.pte, self.files.etrecord,
                                            Path(self.program_path).parent, self.interactive)
        if written:
            self.files.saved = written[0]
        if message:
            self.stage.setText(message)
        return written

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        nodes = item.data(0, NODES_ROLE) or []
        if nodes:
            self.doc.reveal(nodes[0])
            self.doc.select(nodes[0])
            self.doc.status.emit(f"{item.text(0)}: {len(nodes)} not delegated ({', '.join(nodes[:6])}"
                                 f"{', …' if len(nodes) > 6 else ''})")

    def _read(self, result: LowerResult, archive: Archive) -> None:
        self.out_dir = None  # the comparison's from now on
        self.lowered.emit(result, archive)

    def _fail(self, message: str, detail: str) -> None:
        self.show_failed(message, detail)
