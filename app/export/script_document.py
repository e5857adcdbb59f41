"""The tab of one model script: its export calls, why each failed, the options to export again, and its output.

A thin view of `pt2_viewer.core.export.script_session.ScriptSession`. Opening the tab runs the script in the
`export_script` worker (app/jobs/driver.py drives it without blocking the window); the Exports list fills in as each
`torch.export.export` call starts and ends. Selecting a successful call shows its program (the `.pt2` read by the same
reader and `DocumentWidget` as any archive) in the Program tab; a failed one is explained in the Explanation tab: the
kind, the user's line (click to open it), the key message, a hint, the suggested change to `dynamic_shapes` with a
button that applies it and exports again, and the full traceback on demand. Strict mode and the dynamic_shapes
editor re-export any call. The Guards tab shows where each symbol came from; the Log tab streams the script's
stdout and stderr.

Emits `document_ready(doc)` when the first program shown has its graph on screen, or `document_ready(None)` when the
run ended with nothing to show (the list and the explanation are then what there is to see).
"""
from __future__ import annotations

import html
import weakref
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.export.diagnose_panel import DiagnosePanel
from pt2_viewer.app.export.dynamic_shapes_editor import DynamicShapesEditor
from pt2_viewer.app.export.explanation import Explanation
from pt2_viewer.app.export.guards_panel import GuardsPanel
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.loader import ArchiveLoader
from pt2_viewer.app.jobs.driver import WorkerDriver
from pt2_viewer.app.panels import fixed_font
from pt2_viewer.app.panels.details import DetailsPanel
from pt2_viewer.app.widgets.common import append_output, busy_bar, fit_tabs, splitter
from pt2_viewer.app.widgets.source_view import open_source
from pt2_viewer.core.export.dim_names import dim_names, name_symbols
from pt2_viewer.core.export.guards import GuardLog
from pt2_viewer.core.export.plain_words import detail, user_words
from pt2_viewer.core.export.script_session import (
    FAILED,
    JOB,
    OK,
    RUNNING,
    ExportEntry,
    Rerun,
    ScriptSession,
    input_ranks,
    program_input_ranks,
)
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.jobs.client import JobOutcome, default_memory_mb
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.platform import temp_dirs

STATUS_COLOR = {OK: "#2e8b3a", FAILED: "#c0392b", RUNNING: "#7f7f7f"}
STATUS_MARK = {OK: "✔", FAILED: "✘", RUNNING: "…"}
LOG_MAX_LINES = 20000
ENTRY_ROLE = Qt.ItemDataRole.UserRole
SCRIPT_ERROR_ROLE = Qt.ItemDataRole.UserRole + 1  # the row of the script's own error (its ENTRY_ROLE is None)


class ScriptDocument(DocumentTab):
    """One script: run it, list its export calls, explain failures, re-export, show programs."""

    document_ready = Signal(object)  # DocumentWidget, or None when the run ended with no program to show
    open_failed = Signal(str)
    open_in_new_tab = Signal(str)  # a .pt2 path

    def __init__(self, script: str | Path, layouts: LayoutClient, *, memory_limit_mb: int | None = None,
                 timeout_s: float | None = None, parent: QWidget | None = None, interactive: bool = True) -> None:
        super().__init__(parent)
        self.interactive = interactive  # False for --screenshot and tests: no modal dialogs
        self.session = ScriptSession(Path(script))
        self.layouts = layouts
        self.memory_limit_mb = memory_limit_mb or default_memory_mb()
        self.timeout_s = timeout_s
        self.runs_root = temp_dirs.new_dir(self.session.script.stem)
        self._cleanup = weakref.finalize(self, temp_dirs.remove, str(self.runs_root))
        self.driver = WorkerDriver(self)
        self.driver.event.connect(self._event)
        self.driver.output.connect(self._output)
        self.driver.finished.connect(self._finished)
        self.loader = ArchiveLoader(self)
        self.loader.loaded.connect(self._program_loaded)
        self.loader.built.connect(self._program_built)
        self.loader.failed.connect(lambda _p, msg: self._show_program_problem(msg))
        self.program_document: DocumentWidget | None = None
        self.document_entry: ExportEntry | None = None  # the call whose program `program_document` shows
        self.program_entry: ExportEntry | None = None  # the call whose program is shown or being read
        self._ready_sent = False
        self._pending_symbol: str | None = None
        self._build()

    # -- widgets -----------------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.heading = QLabel(f"<b>{html.escape(self.session.script.name)}</b> "
                              f"<span style='color:gray'>{html.escape(str(self.session.script))}</span>")
        self.heading.setWordWrap(True)  # a long path wraps: it never widens the window (issue 30)
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        self.progress = busy_bar()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.run_button = QPushButton("Run again")
        self.run_button.setToolTip("Run the whole script again with its own options")
        self.run_button.clicked.connect(lambda: self.start())
        self.diagnose_button = QPushButton("Diagnose")
        self.diagnose_button.setToolTip("List every export problem in one pass (torch's draft export), with fixes")
        self.diagnose_button.clicked.connect(self.diagnose)
        self.exports = QListWidget()
        self.exports.setWordWrap(True)
        self.exports.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.exports.currentItemChanged.connect(lambda cur, _prev: self._selected(cur))
        self.exports.itemActivated.connect(self._activated)

        self.strict = QCheckBox("strict (trace Python with TorchDynamo)")
        self.editor = DynamicShapesEditor()
        self.reexport_button = QPushButton("Re-export")
        self.reexport_button.setToolTip("Run the script again, exporting the selected call with these options")
        self.reexport_button.clicked.connect(self.reexport)
        self.new_tab_button = QPushButton("Open in new tab")
        self.new_tab_button.clicked.connect(self._open_in_new_tab)
        options = QGroupBox("Export options of the selected call")
        ov = QVBoxLayout(options)
        ov.addWidget(self.strict)
        ov.addWidget(self.editor, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.reexport_button)
        buttons.addWidget(self.new_tab_button)
        buttons.addStretch(1)
        ov.addLayout(buttons)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.heading)
        run_row = QHBoxLayout()
        run_row.addWidget(self.progress, 1)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.diagnose_button)
        lv.addLayout(run_row)
        lv.addWidget(self.progress_label)
        lv.addWidget(QLabel("Exports"))
        lv.addWidget(self.exports, 2)
        lv.addWidget(options, 2)

        self.program_stack = QStackedWidget()
        self.program_placeholder = QLabel("Select a successful export to see its program.")
        self.program_placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.program_placeholder.setWordWrap(True)
        self.program_stack.addWidget(self.program_placeholder)
        self.explanation = Explanation()
        self.explanation.source_requested.connect(self.open_source)
        self.explanation.apply_fix_requested.connect(self.apply_fix)
        self.guards = GuardsPanel()
        self.guards.source_requested.connect(self.open_source)
        self.guards.symbol_requested.connect(self.show_symbol)
        self.log_view = QPlainTextEdit(readOnly=True)
        self.log_view.setFont(fixed_font())
        self.log_view.setMaximumBlockCount(LOG_MAX_LINES)
        self.views = QTabWidget()
        fit_tabs(self.views)
        self.views.addTab(self.program_stack, "Program")
        self.views.addTab(self.explanation, "Explanation")
        self.views.addTab(self.guards, "Guards")
        self.problems = DiagnosePanel()
        self.problems.source_requested.connect(self.open_source)
        self.problems.file_changed.connect(lambda _path: self.start())  # "Apply to file": export the fixed script
        self.problems.draft_requested.connect(self.open_in_new_tab)
        self.views.addTab(self.problems, "Problems")
        self.views.addTab(self.log_view, "Log")

        split = splitter(Qt.Orientation.Horizontal, left, self.views, sizes=(340, 1060), stretch=(1, 3),
                         remember="script")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(split)
        self._show_controls(None)
        self._show_running(False)

    # -- running -----------------------------------------------------------------------------------------------
    def start(self, rerun: Rerun | None = None) -> None:
        """Run the script (again) in a worker; with `rerun`, one call uses the options given."""
        if self.driver.running:
            self.status.emit("The script is still running; cancel it first.")
            return
        out = self.runs_root / f"run-{self.session.runs + 1}"
        self.session.begin(out, rerun)
        self._ready_sent = False
        self.exports.clear()
        self._append_log("worker", self.session.log[-1].text)
        self._show_running(True)
        self.driver.start(JOB, self.session.request(rerun), out, memory_limit_mb=self.memory_limit_mb,
                          timeout_s=self.timeout_s)

    def diagnose(self) -> None:
        """Run the script with the export doctor (app/export/diagnose_panel.py) and show its Problems tab."""
        self.views.setCurrentWidget(self.problems)
        runs = len(list(self.runs_root.glob("diagnose-*")))
        self.problems.start(self.session.script, self.runs_root / f"diagnose-{runs + 1}",
                            memory_limit_mb=self.memory_limit_mb, timeout_s=self.timeout_s)

    def cancel(self) -> None:
        self.driver.cancel()
        self.problems.cancel()

    def shutdown(self) -> None:
        """The tab is closing: stop the worker and remove the run folders."""
        self.driver.cancel()
        self.problems.cancel()
        self._cleanup()

    @property
    def running(self) -> bool:
        return self.driver.running

    def _event(self, event: dict) -> None:
        entry = self.session.apply_event(event)
        if entry is not None:
            self._show_entry_item(entry)
        self.progress_label.setText(self.session.progress)
        self.status.emit(f"{self.session.script.name}: {self.session.progress}")

    def _output(self, stream: str, text: str) -> None:
        self.session.add_output(stream, text)
        self._append_log(stream, text)

    def _append_log(self, stream: str, text: str) -> None:
        append_output(self.log_view, stream, text)

    def _finished(self, outcome: JobOutcome) -> None:
        self.session.finish(outcome.status, outcome.message)
        self._append_log("worker", self.session.log[-1].text)
        self._show_running(False)
        self.progress_label.setText(self.session.outcome_message)
        self.status.emit(f"{self.session.script.name}: {self.session.outcome_message}")
        self.exports.clear()
        for entry in self.session.entries:
            self._show_entry_item(entry)
        self._show_script_error_item()
        if outcome.status == "start_failed":
            self.open_failed.emit(outcome.message)
            return
        wanted = self.session.rerun_entry() if self.session.rerun else None
        wanted = wanted or self.session.first_success() or next(iter(self.session.entries), None)
        if wanted is not None:
            self.select(wanted.index)
        else:
            self._explain_run()
        if not (wanted is not None and wanted.ok and wanted.pt2 is not None):
            self._send_ready(None)

    def _show_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setEnabled(running)
        self.run_button.setEnabled(not running)
        self.reexport_button.setEnabled(not running and self.selected_entry() is not None)

    def _explain_run(self) -> None:
        """No call to select: explain the run itself (a script error, a crash, no export calls)."""
        error = self.session.script_error
        if error is not None:
            self.explanation.show_text(f"The script stopped: {error.type}", error.message, error.hint, error.line,
                                       error.traceback)
        else:
            self.explanation.show_text("No program", self.session.outcome_message)
        self.views.setCurrentWidget(self.explanation)

    # -- the Exports list --------------------------------------------------------------------------------------
    def _show_script_error_item(self) -> None:
        """The script's own error (after its export calls) is a row too: selecting it explains it, with its line
        as a link."""
        error = self.session.script_error
        if error is None:
            return
        where = f"line {error.line.line}" if error.line else "?"
        item = QListWidgetItem(f"{STATUS_MARK[FAILED]} the script stopped  ({where})\n     "
                               f"{self.session.script_error_text()}")
        item.setForeground(QBrush(QColor(STATUS_COLOR[FAILED])))
        item.setToolTip(user_words(error.message))
        item.setData(SCRIPT_ERROR_ROLE, True)
        self.exports.addItem(item)

    def _entry_row(self, index: int) -> int | None:
        for i in range(self.exports.count()):
            entry = self.exports.item(i).data(ENTRY_ROLE)
            if entry is not None and entry.index == index:
                return i
        return None

    def _show_entry_item(self, entry: ExportEntry) -> None:
        row = self._entry_row(entry.index)
        item = self.exports.item(row) if row is not None else None
        if item is None:
            item = QListWidgetItem()
            self.exports.addItem(item)
        status = entry.status if entry.status in STATUS_MARK else FAILED
        item.setText(f"{STATUS_MARK[status]} {entry.title}{'  [re-export]' if entry.rerun else ''}\n"
                     f"     {entry.summary}")
        item.setForeground(QBrush(QColor(STATUS_COLOR[status])))
        item.setToolTip(detail(entry.failure, entry.names) if entry.failure is not None else entry.summary)
        item.setData(ENTRY_ROLE, entry)

    def selected_entry(self) -> ExportEntry | None:
        item = self.exports.currentItem()
        return item.data(ENTRY_ROLE) if item is not None else None

    def select(self, index: int) -> None:
        """Select call `index` in the list: a successful one shows its program, a failed one its explanation."""
        i = self._entry_row(index)
        if i is None:
            return
        if self.exports.currentRow() == i:
            self._selected(self.exports.item(i))
        else:
            self.exports.setCurrentRow(i)

    def _selected(self, item: QListWidgetItem | None) -> None:
        entry: ExportEntry | None = item.data(ENTRY_ROLE) if item is not None else None
        self._show_controls(entry)
        if entry is None:
            if item is not None and item.data(SCRIPT_ERROR_ROLE):
                self.guards.set_log(GuardLog(), "")
                self._explain_run()
            return
        self.guards.set_log(entry.guards, entry.title)
        self.explanation.show_entry(entry, self.session.fixed_spec(entry))
        if self.session.running:
            return  # the report is not read yet; the selection is shown again when the run ends
        if entry.ok and entry.pt2 is not None:
            self.open_entry(entry)
        else:
            self.views.setCurrentWidget(self.explanation)

    def _show_controls(self, entry: ExportEntry | None) -> None:
        self.strict.setChecked(bool(entry and entry.strict))
        self.strict.setEnabled(entry is not None)
        if entry is None:
            self.editor.set_spec({"dims": {}, "inputs": {}}, [], {})
        else:
            # no spec in the report although the script passed one: it cannot be expressed (nested inputs)
            spec = entry.spec if entry.spec is not None or entry.dynamic_shapes else {"dims": {}, "inputs": {}}
            self.editor.set_spec(spec, entry.inputs, input_ranks(entry), entry.input_shapes)
        self.reexport_button.setEnabled(entry is not None and not self.driver.running)
        self.new_tab_button.setEnabled(entry is not None and entry.ok and entry.pt2 is not None)

    # -- re-exporting ------------------------------------------------------------------------------------------
    def reexport(self) -> None:
        """Run the script again, exporting the selected call with the strict flag and spec of the controls."""
        entry = self.selected_entry()
        if entry is None:
            return
        try:
            spec = self.editor.spec()
        except ValueError as e:
            self.status.emit(f"Cannot re-export: {e}")
            self.explanation.show_text("The dynamic_shapes spec is not valid", str(e),
                                       "Give every named Dim a name that is a Python identifier.")
            self.views.setCurrentWidget(self.explanation)
            return
        self.start(Rerun(entry.call_id, strict=self.strict.isChecked(), dynamic_shapes=spec))

    def apply_fix(self) -> None:
        """Apply export's suggested fixes to the selected call's dynamic_shapes and export it again."""
        entry = self.selected_entry()
        fixed = self.session.fixed_spec(entry) if entry is not None else None
        if entry is None or fixed is None:
            return
        self.editor.set_spec(fixed, entry.inputs, input_ranks(entry), entry.input_shapes)
        self.start(Rerun(entry.call_id, strict=entry.strict, dynamic_shapes=fixed))

    def _activated(self, item: QListWidgetItem) -> None:
        entry = item.data(ENTRY_ROLE)
        if entry:
            self.open_entry(entry)

    # -- programs ----------------------------------------------------------------------------------------------
    def selected_pt2(self) -> Path | None:
        """The .pt2 of the selected call (for File > Save Program As…), if it exported and saved."""
        entry = self.selected_entry()
        return entry.pt2 if entry is not None and entry.ok else None

    # -- the tab contract (app/graph/tab.py) --------------------------------------------------------------------
    def source_file(self) -> str | None:
        return str(self.session.script)

    def current_program(self) -> DocumentWidget | None:
        return self.program_document  # the program shown in the Program tab

    def graphs(self) -> list[DocumentWidget]:
        return [self.program_document] if self.program_document is not None else []

    def can_save_program(self) -> bool:
        return True

    def program_file(self) -> str | None:
        pt2 = self.selected_pt2()
        return str(pt2) if pt2 is not None else None

    def can_save_decomposed(self) -> bool:
        return False

    def save_decomposed_dialog(self) -> None:
        pass

    def release(self) -> None:
        self.shutdown()  # stop its worker, remove its run folders

    def open_entry(self, entry: ExportEntry) -> None:
        """Show a successful call's program in the Program tab (read off the GUI thread)."""
        if not entry.ok or entry.pt2 is None:
            return
        self.views.setCurrentWidget(self.program_stack)
        if self.document_entry is entry and self.program_document is not None:
            self.program_stack.setCurrentWidget(self.program_document)
            return
        self.program_entry = entry
        self.program_placeholder.setText(f"Reading {entry.pt2.name}…")
        self.program_stack.setCurrentWidget(self.program_placeholder)
        self.loader.load(str(entry.pt2))

    def _program_loaded(self, path: str, archive: Archive) -> None:
        entry = self.program_entry
        if entry is None or entry.pt2 is None or str(entry.pt2) != path:
            return  # another call was selected meanwhile
        if not archive.programs:
            self._show_program_problem(f"{Path(path).name} holds no program graph.")
            return
        ranks = program_input_ranks(archive.programs[0])
        if ranks != entry.program_ranks:  # the editor can now offer every dimension of every input
            entry.program_ranks = ranks
            if self.selected_entry() is entry:
                self._show_controls(entry)
        for program in archive.programs:  # f32[2*batch, 3] where torch wrote f32[2*s6, 3]: the script's own names
            name_symbols(program, dim_names(entry.spec))
        # indexes (and takes cached layouts) in a thread, as the window's tabs do
        self.loader.build(path, archive, archive.programs[0].name, self.layouts.service)

    def _program_built(self, path: str, model: DocumentModel) -> None:
        entry = self.program_entry
        if entry is None or entry.pt2 is None or str(entry.pt2) != path:
            return  # another call was selected meanwhile
        if self.program_document is not None:
            self.program_stack.removeWidget(self.program_document)
            self.program_document.deleteLater()
        doc = DocumentWidget(model, self.layouts, interactive=self.interactive)
        doc.status.connect(self.status)
        doc.layout_failed.connect(lambda msg: self.status.emit(f"Layout failed: {msg}"))
        doc.graph_ready.connect(lambda d=doc: self._graph_ready(d))
        fit_tabs(doc.panels)  # the program's panels share this tab's width with the Exports column
        names = dim_names(entry.spec)  # batch (s77): the script's own Dim names, in Symbols and in Details
        doc.symbols_panel.set_dim_names(names)
        details = doc.panel_widgets["Details"]
        if isinstance(details, DetailsPanel):
            details.set_dim_names(names)
        self.program_document = doc
        self.document_entry = entry
        self.program_stack.addWidget(doc)
        self.program_stack.setCurrentWidget(doc)
        doc.start()

    def _graph_ready(self, doc: DocumentWidget) -> None:
        if self._pending_symbol is not None:
            name, self._pending_symbol = self._pending_symbol, None
            self.show_symbol(name)
        self._send_ready(doc)

    def _send_ready(self, doc: DocumentWidget | None) -> None:
        if not self._ready_sent:
            self._ready_sent = True
            self.document_ready.emit(doc)

    def _show_program_problem(self, message: str) -> None:
        self.program_entry = None
        self.program_placeholder.setText(message)
        self.program_stack.setCurrentWidget(self.program_placeholder)
        self.status.emit(message)
        self._send_ready(None)

    def _open_in_new_tab(self) -> None:
        path = self.selected_pt2()
        if path is not None:
            self.open_in_new_tab.emit(str(path))

    def show_symbol(self, name: str) -> None:
        """Find a captured symbol in the exported program's Symbols panel and highlight the nodes that use it."""
        entry = self.selected_entry()
        if entry is None or not entry.ok or entry.pt2 is None:
            self.status.emit(f"{name}: this call has no exported program to look it up in.")
            return
        doc = self.program_document
        if doc is None or self.document_entry is not entry or not doc.ready:
            self._pending_symbol = name
            self.open_entry(entry)
            return
        self.views.setCurrentWidget(self.program_stack)
        sym = next((s for s in entry.guards.symbols if s.name == name), None)
        stands_for = f"{sym.input}.shape[{sym.axis}]" if sym and sym.input is not None else None
        if doc.show_symbol(name, stands_for):
            return
        self.status.emit(f"{name} is not a symbol of the exported program (export specialized it or it was "
                         "replaced by an equal symbol).")

    def open_source(self, file: str, line: int) -> None:
        open_source(file, line, self)
