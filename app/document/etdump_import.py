"""View > Overlay > Import ETDump…: an ETDump recorded where a `.pte` ran (a phone, a board, another process) painted
on the `.pte`'s graph, and on its source's beside it where the tab shows both (the lowered tab), as the run-time
overlay a local run paints.

The dialog asks for the ETDump, and optionally the debug buffer written with it and the `.pte`'s ETRecord (the one
beside the `.pte` is shown and taken when none is named), then runs in the worker the `run_pte` job `run FILE.pte
--etdump` runs, with its progress and Cancel; what it paints and says is core's (core/deploy/etdump_overlay.py), a
refusal (another program's recording, a missing ETRecord where lowering again differs, a damaged file) the job's one
line in the dialog's failure box."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.jobs.job_widgets import JobDialog, file_row
from pt2_viewer.app.widgets.file_dialogs import open_file
from pt2_viewer.core.deploy.etdump_overlay import (
    DEBUG_BUFFER_FILES,
    ETDUMP_FILES,
    ETRECORD_FILES,
    JOB,
    EtdumpFiles,
    etdump_overlays,
    etdump_request,
    etrecord_beside,
    status_line,
)
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.platform import temp_dirs


class EtdumpImportDialog(JobDialog):
    """Imports a recording of `pte`'s program (its document) and paints it there and on `source` (the source
    program's document beside it, or None). Emits `imported(RunResult)` once painted, `failed(message)` else."""

    imported = Signal(object)
    failed = Signal(str)

    def __init__(self, pte: DocumentWidget, source: DocumentWidget | None = None, parent: QWidget | None = None
                 ) -> None:
        super().__init__(parent)
        self.pte, self.source = pte, source
        self.pte_path = pte.model.archive.path
        self.setWindowTitle(f"Import an ETDump of {Path(self.pte_path).name}")
        self.make_driver(self.pte_path)
        self.run_result: RunResult | None = None

        self.etdump, self.debug_buffer, self.etrecord = QLineEdit(), QLineEdit(), QLineEdit()
        self.debug_buffer.setPlaceholderText("optional: checked against the ETDump")
        beside = etrecord_beside(self.pte_path)
        self.etrecord.setPlaceholderText(f"{Path(beside).name}, beside the .pte" if beside else
                                         "optional: the one beside the .pte, else lowering the source again")
        form = QFormLayout()
        for label, edit, title, kinds in (
                ("ETDump", self.etdump, "The ETDump the runtime wrote", ETDUMP_FILES),
                ("Debug buffer", self.debug_buffer, "The debug buffer written with it", DEBUG_BUFFER_FILES),
                ("ETRecord", self.etrecord, "The .pte's ETRecord", ETRECORD_FILES)):
            browse = QPushButton("Browse…")
            browse.clicked.connect(lambda _=False, e=edit, t=title, k=kinds: self._browse(e, t, k))
            form.addRow(label, file_row(edit, browse))
        self.make_job_widgets("Import")
        self.start_button.clicked.connect(self.start)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.close_button)
        where = f" and its source {Path(source.model.archive.path).name}" if source is not None else ""
        v = QVBoxLayout(self)
        v.addWidget(QLabel(f"Paint the times recorded where <b>{Path(self.pte_path).name}</b> ran on its graph"
                           f"{where}. Nothing runs here.", wordWrap=True))
        v.addLayout(form)
        for widget in (self.stage, self.progress, self.failure):
            v.addWidget(widget)
        v.addLayout(buttons)
        self.resize(640, 260)

    def _browse(self, edit: QLineEdit, title: str, kinds: str) -> None:
        path = open_file(self, title, edit.text().strip() or self.pte_path, kinds)
        if path:
            edit.setText(path)

    def files(self) -> EtdumpFiles:
        return EtdumpFiles(self.etdump.text().strip(), self.debug_buffer.text().strip() or None,
                           self.etrecord.text().strip() or None)

    def start(self) -> None:
        if self.driver.running:
            return
        files = self.files()
        if not files.etdump:
            self.failure.show_failure("Choose the ETDump the runtime wrote (RUN.etdp).", "", [])
            return
        source = self.source.model.archive.path if self.source is not None else None
        self.out_dir = temp_dirs.new_dir("etdump")
        self.job_started()
        self.driver.start(JOB, etdump_request(self.pte_path, files, source), self.out_dir)

    def _finished(self, outcome: JobOutcome) -> None:
        self.job_ended()
        result = self.read_result(outcome, RunResult)
        if result is None:
            return
        temp_dirs.remove(self.out_dir)
        self.out_dir = None
        self.run_result = result
        overlays = etdump_overlays(result)
        for doc, overlay in ((self.pte, overlays.pte), (self.source, overlays.source)):
            if doc is not None and overlay is not None:
                doc.tools.add_overlay(overlay)
        line = status_line(result)
        self.stage.setText(line)
        self.pte.status.emit(line)
        self.imported.emit(result)


__all__ = ["EtdumpImportDialog"]
