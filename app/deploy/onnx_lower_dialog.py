"""Program > Lower to ONNX…: run the worker's `lower_onnx` job (torch.onnx.export, dynamo=True) with progress and
Cancel, paint the source and list what each source op became ("fused by FuseBatchNormIntoConv", "dropped"; a click
reveals the node; core/deploy/onnx_overlay.py),
then hand the `.onnx` on to open beside its source as the pipeline view's stages: source | ONNX, a node selected in
one selected in the other through the links the job wrote into the file (core/diff/onnx_stage.py).

The `.onnx` is written into the job's temporary folder, which goes when the app quits; "Save .onnx As…" here, or
File > Save Program As… on the tab it opens in, saves it where the user wants (the save dialog asks before replacing
a file), and closing that tab unsaved asks first (`OnnxFile`, shared by both, app/window/lowered_tab.py).
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTreeWidgetItem, QVBoxLayout, QWidget

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.jobs.job_widgets import JobDialog
from pt2_viewer.app.panels import make_table
from pt2_viewer.app.widgets.file_dialogs import save_file
from pt2_viewer.core.deploy.onnx_overlay import fate_overlay
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.schemas.onnx_lower import OnnxLowerRequest, OnnxLowerResult
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.util.files import write_atomically

NODE_ROLE = Qt.ItemDataRole.UserRole


@dataclass
class OnnxFile:
    """The `.onnx` the dialog made in its temporary folder, and where the user saved it (None until saved): shared by
    the dialog and the tab it opens in, so a save from either stops the question on closing."""

    path: Path
    saved: Path | None = None

    def unsaved(self) -> str | None:
        return None if self.saved is not None else f"the ONNX model {self.path.name}"


def summary(result: OnnxLowerResult) -> str:
    dims = f"; dynamic dims {', '.join(result.dynamic_dims)}" if result.dynamic_dims else ""
    return f"{result.counts()} (opset {result.opset}{dims})."


class OnnxLowerDialog(JobDialog):
    """Emits `lowered(result)` when the job succeeded (its `.onnx` at `result.onnx`, and in `file`), `failed(message)`
    when not."""

    lowered = Signal(object)
    failed = Signal(str)

    def __init__(self, doc: DocumentWidget, interactive: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.program_path = doc.model.archive.path
        self.program_name = doc.model.program.name
        self.interactive = interactive
        self.setWindowTitle(f"Lower {Path(self.program_path).name} to ONNX")
        self.make_driver(self.program_path)
        self.lowered_result: OnnxLowerResult | None = None
        self.file: OnnxFile | None = None  # the last lowering's .onnx, and where it was saved

        self.make_job_widgets("Lower")
        self.stage.setText("torch.onnx.export (dynamo=True) in the worker, onnxscript's optimizer included; the "
                           "program's dynamic dims stay dynamic.")
        self.table = make_table(["source node", "op", "became"], stretch_column=2)
        self.table.setVisible(False)
        self.table.itemClicked.connect(self._clicked)
        self.save_button = QPushButton("Save .onnx As…")
        self.save_button.setToolTip("Save the .onnx where you choose; the lowered file is deleted when the app quits")
        self.save_button.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.save_button, self.start_button, self.close_button):
            buttons.addWidget(button)
        v = QVBoxLayout(self)
        v.addWidget(QLabel(f"<b>{Path(self.program_path).name}</b> [{self.program_name}]"))
        v.addWidget(self.stage)
        v.addWidget(self.progress)
        v.addWidget(self.failure)
        v.addWidget(self.table, 1)
        v.addLayout(buttons)
        self.resize(720, 420)
        self.start_button.clicked.connect(self.start)
        self.save_button.clicked.connect(self.save_dialog)

    def start(self) -> None:
        if self.driver.running:
            return
        self.out_dir = temp_dirs.new_dir("lower-onnx")
        request = OnnxLowerRequest(program=self.program_path, program_name=self.program_name,
                                   output=str(self.out_dir / f"{Path(self.program_path).stem}.lowered.onnx"))
        self.table.setVisible(False)
        self.job_started()
        self.driver.start("lower_onnx", request, self.out_dir)

    def _finished(self, outcome: JobOutcome) -> None:
        self.job_ended()
        result = self.read_result(outcome, OnnxLowerResult)
        if result is None:
            return
        self.lowered_result = result
        self.file = OnnxFile(Path(result.onnx or ""))
        self.save_button.setEnabled(True)
        self.show_result(result)
        self.out_dir = None  # the opened tab's from now on (temp_dirs removes it when the app quits)
        self.lowered.emit(result)

    def show_result(self, result: OnnxLowerResult) -> None:
        """Paint the source by what each op became (the overlay "ONNX") and list them."""
        self.doc.tools.add_overlay(fate_overlay(result))
        self.stage.setText(summary(result))
        self.table.clear()
        for row in result.nodes or []:
            became = row.became()
            item = QTreeWidgetItem([row.node, row.target, became])
            item.setToolTip(2, became)
            item.setData(0, NODE_ROLE, row.node)
            self.table.addTopLevelItem(item)
        self.table.setVisible(self.table.topLevelItemCount() > 0)

    def save_dialog(self) -> Path | None:
        """Save .onnx As…: the lowered file where the user chooses (offered beside the source)."""
        if self.file is None:
            return None
        name = self.file.path.name
        chosen = save_file(self, "Save .onnx As", self.program_path, name, "ONNX models (*.onnx)")
        if not chosen:
            return None
        try:
            onnx = self.file.path
            write_atomically(chosen, lambda tmp: shutil.copyfile(onnx, tmp), parents=False)
        except OSError as e:
            self.stage.setText(f"Could not save {chosen}: {e.strerror or e}")
            return None
        self.file.saved = Path(chosen)
        self.stage.setText(f"Saved {chosen}")
        return Path(chosen)

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        node = item.data(0, NODE_ROLE)
        if node:
            self.doc.reveal(node)
            self.doc.select(node)


__all__ = ["OnnxFile", "OnnxLowerDialog", "summary"]
