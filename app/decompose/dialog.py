"""Program > Decompose…: pick a target (functional, core ATen, or a custom table from the user's own Python file),
run the worker's `decompose` job with progress and Cancel, and hand the result on to open beside the original.

A table file (and an 'import first' file) is Python code that the worker runs, so it needs the same trust
confirmation as opening a script (`core/platform/trust.py`). Failures (a decomposition that raises, a broken table file,
a custom op that is not registered) stay in the dialog in words, with torch's detail below, so the user can fix the
file and press Decompose again.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.graph.loader import ArchiveLoader
from pt2_viewer.app.jobs.job_widgets import PY_FILTER, JobDialog, confirm_code, file_row
from pt2_viewer.app.widgets.common import radio_column
from pt2_viewer.app.widgets.file_dialogs import open_file
from pt2_viewer.core.compare.decomposition import Decomposition
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.schemas.base import SchemaError
from pt2_viewer.core.jobs.schemas.decompose import DecomposeRequest, DecomposeResult
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.platform.trust import TrustStore
from pt2_viewer.core.util.words import plural

TARGETS = (("functional", "Functional ATen (empty table: no in-place ops, nothing decomposed)"),
           ("core", "Core ATen (torch.export.default_decompositions)"),
           ("table", "Custom table from a Python file"))

class DecomposeDialog(JobDialog):
    """Emits `decomposed(Decomposition, Archive)` when the job succeeded and its `.pt2` was read (the job's folder is
    the comparison's from then on); `failed(message)` when it did not (the message also stays on show)."""

    decomposed = Signal(object, object)
    failed = Signal(str)

    def __init__(self, program_path: str, program_name: str | None = None, trust: TrustStore | None = None,
                 interactive: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Decompose {Path(program_path).name}")
        self.program_path = program_path
        self.program_name = program_name
        self.trust = trust or TrustStore.default()
        self.interactive = interactive
        self.make_driver(program_path)  # the program's warm worker: loaded once for all jobs
        if interactive:
            self.driver.prewarm()  # torch imports while the user chooses a target
        self.job_result: DecomposeResult | None = None  # the job's folder (out_dir) is the compare tab's after

        self.target_buttons, targets = radio_column(self, TARGETS, "target", checked=1)
        self.table_edit = QLineEdit(placeholderText="a .py file defining decomp_table (or a function returning it)")
        self.table_browse = QPushButton("Browse…")
        self.table_name = QLineEdit(placeholderText="optional: the table's name when the file has several")
        self.preload_edit = QLineEdit(placeholderText="optional: a .py file to import first (custom op definitions)")
        self.preload_browse = QPushButton("Browse…")
        form = QFormLayout()
        form.addRow("Target", targets)
        form.addRow("Table file", file_row(self.table_edit, self.table_browse))
        form.addRow("Table name", self.table_name)
        form.addRow("Import first", file_row(self.preload_edit, self.preload_browse))

        self.make_job_widgets("Decompose", detail_height=180)
        self.error = self.failure.error
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.close_button)

        v = QVBoxLayout(self)
        v.addWidget(QLabel(f"<b>{Path(program_path).name}</b>" + (f" [{program_name}]" if program_name else "")))
        v.addLayout(form)
        v.addWidget(self.stage)
        v.addWidget(self.progress)
        v.addWidget(self.failure)
        v.addLayout(buttons)
        self.resize(640, 360)

        self.target_buttons.idToggled.connect(lambda _i, _on: self._update_enabled())
        self.table_browse.clicked.connect(lambda: self._browse(self.table_edit, "Decomposition table"))
        self.preload_browse.clicked.connect(lambda: self._browse(self.preload_edit, "Python file to import first"))
        self.start_button.clicked.connect(self.start)
        self._update_enabled()

    # -- choices -------------------------------------------------------------------------------------------------
    def target(self) -> str:
        button = self.target_buttons.checkedButton()  # one is always checked: the group is exclusive, one starts on
        return str(button.property("target")) if button is not None else "core"

    def set_target(self, key: str, table: str | None = None) -> None:
        for b in self.target_buttons.buttons():
            b.setChecked(b.property("target") == key)
        if table is not None:
            self.table_edit.setText(table)

    def _update_enabled(self) -> None:
        custom = self.target() == "table"
        for w in (self.table_edit, self.table_browse, self.table_name):
            w.setEnabled(custom)

    def _browse(self, edit: QLineEdit, title: str) -> None:
        start = edit.text().strip() or self.program_path  # the file's folder, else the program's
        path = open_file(self, title, start, PY_FILTER)
        if path:
            edit.setText(path)

    def request(self) -> DecomposeRequest | str:
        """The job's request, or why it cannot be made (a missing file, an untrusted file)."""
        request = DecomposeRequest(program=self.program_path, to=self.target(), program_name=self.program_name or None)
        code: list[tuple[str, str]] = []
        if self.target() == "table":
            if not self.table_edit.text().strip():
                return "Choose the Python file that holds your decomposition table."
            request.table = self.table_edit.text().strip()
            request.table_name = self.table_name.text().strip() or None
            code.append((request.table, "the decomposition table"))
        if self.preload_edit.text().strip():
            request.preload = self.preload_edit.text().strip()
            code.append((request.preload, "the import-first file"))
        for path, what in code:
            p = Path(path).expanduser()
            if not p.is_file():
                return f"{what.capitalize()} '{path}' does not exist. Choose an existing .py file."
            refused = confirm_code(self, p, self.trust, self.interactive, what)
            if refused:
                return refused
        return request

    # -- running -------------------------------------------------------------------------------------------------
    def start(self) -> None:
        if self.driver.running:
            return
        request = self.request()
        if isinstance(request, str):
            self._fail(request, "")
            return
        out_dir = temp_dirs.new_dir("decompose")
        self.out_dir = out_dir
        stem = Path(self.program_path).stem
        request.output = str(out_dir / f"{stem}.{Path(request.table or request.to).stem}.pt2")
        self.job_started()
        self.driver.start("decompose", request, out_dir)

    def _finished(self, outcome: JobOutcome) -> None:
        self.job_ended()
        failure = outcome.failure_text()
        if failure is not None:
            self._fail(*failure)
            return
        assert outcome.result is not None and self.out_dir is not None
        try:
            self.job_result = DecomposeResult.from_json(outcome.result)
            decomposition = Decomposition.from_decompose(self.job_result, self.out_dir)
        except SchemaError as e:
            self._fail(f"The worker's result cannot be read: {e}.", "")
            return
        self.stage.setText(f"Reading {Path(decomposition.output).name}…")
        self.start_button.setEnabled(False)
        loader = ArchiveLoader(self)
        loader.loaded.connect(lambda _path, archive: self._read(decomposition, archive))
        loader.failed.connect(lambda _path, message: self._fail(f"The decomposed program cannot be read: {message}",
                                                                 ""))
        loader.load(decomposition.output)

    def _read(self, decomposition: Decomposition, archive: Archive) -> None:
        assert self.job_result is not None
        self.stage.setText(f"Decomposed: {plural(self.job_result.nodes_before or 0, 'node')} "
                           f"became {self.job_result.nodes_after}.")
        self.out_dir = None  # now the comparison's (removed when its tab closes)
        self.decomposed.emit(decomposition, archive)
        self.accept()

    def _fail(self, message: str, detail: str) -> None:
        self.start_button.setEnabled(True)
        self.show_failed(message, detail)
