"""An AOTInductor package as a tab: per compiled model its device, constants, compile flags and the generated wrapper
and kernel sources (read only, highlighted, searchable); beside them, the program's graph when the archive holds
the ExportedProgram too (`package_pt2` with both). Nothing here loads the compiled library: running it is the Run
job's, after its own consent (`--allow-native`). What the files say comes from core/pt2/aoti.py.

Run the compiled code: inputs from a named source, else the package's own program, else made from the wrapper's
input checks (the result line says which). "Time each kernel" profiles the kernels (core/run/aoti_profile.py): their
times fill the Kernels page, and their nodes' share is painted on the program's graph as the run-time overlay."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.deploy.code_view import CodeView
from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.jobs.driver import WorkerDriver
from pt2_viewer.app.panels import make_table
from pt2_viewer.app.platform.trust_dialog import confirm_native
from pt2_viewer.app.qt import top_level_items
from pt2_viewer.app.widgets.file_dialogs import open_file
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.platform.trust import TrustStore
from pt2_viewer.core.pt2.aoti import AotiFile, AotiModel, aoti_models, read_aoti_source
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pte.tables import size_text
from pt2_viewer.core.run.readout import failure_of, latency_text, output_rows

PAGE_ROLE = Qt.ItemDataRole.UserRole


class AotiTab(DocumentTab):
    """`program` is the graph of the archive's ExportedProgram, made by the window, when it holds one. `ran(result)`
    when a run of the compiled code ends (its `RunResult`; None when it did not start)."""

    ran = Signal(object)

    def __init__(self, path: str, archive: Archive, program: DocumentWidget | None = None,
                 parent: QWidget | None = None, *, interactive: bool = True, trust: TrustStore | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.archive = archive
        self.program = program
        self.interactive = interactive
        self.trust = trust or TrustStore.default()
        self.driver = WorkerDriver(self)
        self.driver.finished.connect(self._finished)
        try:
            self.models: list[AotiModel] = aoti_models(archive)
            problem = ""
        except ArchiveError as e:
            self.models, problem = [], str(e)
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outline = QTreeWidget()
        self.outline.setHeaderHidden(True)
        self.table = make_table(["", "", "", ""], stretch_column=3)
        self.code = CodeView()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.table)
        self.pages.addWidget(self.code)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.outline)
        split.addWidget(self.pages)
        if program is not None:
            program.status.connect(self.status.emit)
            split.addWidget(program)
            split.setSizes([200, 700, 500])
        else:
            split.setSizes([240, 1100])
        self.device = self.models[0].device if self.models and self.models[0].device != "unknown" else "cpu"
        self.run_button = QPushButton(f"Run the compiled code ({self.device.upper()})…")
        self.run_button.setToolTip("Loads the package's library (after asking) and runs it in the worker")
        self.run_button.clicked.connect(self.run)
        self.source = QLineEdit()
        self.source.setPlaceholderText("inputs made from the wrapper's input checks (or name its source .pt2)"
                                       if program is None
                                       else "inputs from the package's own program (or name another .pt2)")
        self.time_kernels = QCheckBox("Time each kernel")
        self.time_kernels.setToolTip("Profile each kernel call (torch.profiler) and paint its time over the program "
                                     "nodes it computes")
        self.kernel_seconds: dict[tuple[str, int], float] = {}  # (wrapper entry, line) -> seconds
        browse = QPushButton("Source…")
        browse.clicked.connect(self._choose_source)
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        run_row = QHBoxLayout()
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.time_kernels)
        run_row.addWidget(self.source, 1)
        run_row.addWidget(browse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addLayout(run_row)
        layout.addWidget(self.result)
        layout.addWidget(split, 1)
        self._fill(problem)
        self.table.itemClicked.connect(lambda item, _c: self._kernel_clicked(item, reveal=True))
        self.table.itemDoubleClicked.connect(lambda item, _c: self._kernel_clicked(item, reveal=False))
        self.outline.currentItemChanged.connect(lambda item, _old: self._show(item))
        first = self.outline.topLevelItem(0)
        child = first.child(0) if first is not None else None
        if child is not None:
            self.outline.setCurrentItem(child)

    # -- the outline ---------------------------------------------------------------------------------------------
    def _fill(self, problem: str) -> None:
        name = Path(self.path).name
        models = ", ".join(f"{m.name} ({m.device})" for m in self.models) or "none readable"
        extra = (" It also holds the ExportedProgram, drawn on the right." if self.program is not None
                 else " It holds compiled code and no program graph.")
        self.header.setText(f"<b>{name}</b>: an AOTInductor package. Compiled models: {models}.{extra} "
                            "Its library is loaded only when you run it, after you allow native code."
                            + (f"<br><span style='color:#b3261e'>{problem}</span>" if problem else ""))
        for m in self.models:
            top = QTreeWidgetItem([f"{m.name} — {m.device}"])
            self.outline.addTopLevelItem(top)
            for title, page in (("Overview", ("overview", m.name)),
                                (f"Constants ({len(m.constants)}, {size_text(m.constant_bytes)})",
                                 ("constants", m.name)),
                                (f"Compile flags ({len(m.compile_flags)})", ("flags", m.name)),
                                (f"Kernels ({len(m.kernels)})", ("kernels", m.name)),
                                (f"Files ({len(m.files)})", ("files", m.name))):
                item = QTreeWidgetItem([title])
                item.setData(0, PAGE_ROLE, page)
                top.addChild(item)
            sources = QTreeWidgetItem([f"Sources ({len(m.sources)})"])
            top.addChild(sources)
            for f in m.sources:
                item = QTreeWidgetItem([f"{f.role}: {f.name}"])
                item.setToolTip(0, f"{f.entry} ({size_text(f.nbytes)})")
                item.setData(0, PAGE_ROLE, ("source", m.name, f.entry))
                sources.addChild(item)
            top.setExpanded(True)
            sources.setExpanded(True)

    def _model(self, name: str) -> AotiModel:
        return next(m for m in self.models if m.name == name)

    def _show(self, item: QTreeWidgetItem | None) -> None:
        page = item.data(0, PAGE_ROLE) if item is not None else None
        if not page:
            return
        kind, model = page[0], self._model(page[1])
        if kind == "source":
            self.show_source(model, next(f for f in model.files if f.entry == page[2]))
            return
        self.table.clear()
        if kind == "overview":
            self._rows(["", ""], [("device", model.device), ("inputs", ", ".join(model.inputs)),
                                  ("outputs", ", ".join(model.outputs)),
                                  ("constants", f"{len(model.constants)} ({size_text(model.constant_bytes)})")]
                       + sorted(model.metadata.items()))
        elif kind == "constants":
            self._rows(["name", "shape", "bytes", "dtype / kind / fqn"],
                       [(c.name, str(list(c.shape)), f"{c.nbytes:,}", f"{c.dtype}  {c.kind}  {c.fqn}")
                        for c in model.constants])
        elif kind == "kernels":
            self._rows(["kernel", "ms", "line", "from the nodes", "ATen"],
                       [(k.kernel, f"{self.kernel_seconds[(k.wrapper, k.line)] * 1e3:.4f}"
                         if (k.wrapper, k.line) in self.kernel_seconds else "", str(k.line),
                         ", ".join(k.source_nodes), ", ".join(k.aten)) for k in model.kernels])
            for i, item in enumerate(top_level_items(self.table)):
                item.setData(0, PAGE_ROLE, (model.name, i))
        elif kind == "flags":
            self._rows(["flag"], [(f,) for f in model.compile_flags]
                       + [(f"command: {c}",) for c in model.compile_commands])
        else:
            self._rows(["file", "role", "bytes", "entry"], [(f.name, f.role, f"{f.nbytes:,}", f.entry)
                                                           for f in model.files])
        self.pages.setCurrentWidget(self.table)

    def _kernel_clicked(self, item: QTreeWidgetItem, reveal: bool) -> str | None:
        """A kernel's row: select the program node it came from (click), or show it in the wrapper (double-click).
        Returns the node revealed, if any."""
        where = item.data(0, PAGE_ROLE)
        if not where:
            return None
        model = self._model(where[0])
        k = model.kernels[where[1]]
        if not reveal:
            self.show_source(model, next(f for f in model.files if f.entry == k.wrapper))
            self.code.go_to_line(k.line)
            return None
        if self.program is None:
            return None
        nodes = self.program.model.program.graph.node_by_name
        node = next((n for n in k.source_nodes if n in nodes), None)
        if node is not None:
            self.program.reveal(node)
        return node

    def _rows(self, headers: list[str], rows: Sequence[tuple[str, ...]]) -> None:
        self.table.setHeaderLabels(headers)
        self.table.setColumnCount(len(headers))
        for row in rows:
            self.table.addTopLevelItem(QTreeWidgetItem(list(row)))

    def show_source(self, model: AotiModel, f: AotiFile) -> None:
        try:
            text = read_aoti_source(self.archive, f.entry)
        except ArchiveError as e:
            text = str(e)
        self.code.show_text(f"<b>{model.name}</b> / {f.name} &nbsp; <span style='color:gray'>{f.role}, "
                            f"{size_text(f.nbytes)}, read only</span>", text, f.language)
        self.pages.setCurrentWidget(self.code)

    # -- running the compiled code ---------------------------------------------------------------------------------
    def _choose_source(self) -> None:
        path = open_file(self, "Source program", self.path, "PyTorch export archives (*.pt2)")
        if path:
            self.source.setText(path)

    def run(self) -> bool:
        """Ask (once per file content) to load the compiled code, then run it in the worker: the `run_aoti` job."""
        if self.driver.running:
            return False
        if not confirm_native(self, self.path, self.trust, interactive=self.interactive):
            self.result.setText("The compiled code was not run: loading it runs it, with your permissions.")
            self.ran.emit(None)
            return False
        request = ArtifactRunRequest(program=self.path, device=self.device, allow_native=True,
                                     node_times=self.time_kernels.isChecked(),
                                     source=self.source.text().strip() or None)
        self.result.setText("Running the compiled code in the worker…")
        self.run_button.setEnabled(False)
        self.driver.start("run_aoti", request, temp_dirs.new_dir("run"))
        return True

    def _finished(self, outcome: JobOutcome) -> None:
        self.run_button.setEnabled(True)
        result = outcome.result_as(RunResult)
        failure = failure_of(result) if result is not None else None
        if result is None or failure is not None:
            self.result.setText(f"<span style='color:#b3261e'>{failure.text() if failure else outcome.message}"
                                "</span>")
        elif result.inputs is not None and result.latency is not None:
            rows = "; ".join(f"{r.name} {r.dtype}{r.shape} min {r.minimum} max {r.maximum} mean {r.mean}"
                             for r in output_rows(result))
            inputs = result.inputs
            where = f"{inputs.source} inputs" + (f" ({inputs.note})" if inputs.note else "")
            self.result.setText(f"<b>Ran</b> on {result.device} with {where}: {rows}. <b>Latency</b>: "
                                f"{latency_text(result.latency)}" + self._kernel_text(result))
            self._show_kernel_times(result)
        self.ran.emit(result)  # the run's RunResult (None: it wrote none)

    def _kernel_text(self, result: RunResult) -> str:
        kernels = result.kernel_times
        if kernels is None:
            return ""
        if not kernels:
            return f"<br>{result.kernel_times_note or 'No kernel was timed.'}"
        top = kernels[0]
        return (f"<br><b>Kernels</b>: {len(kernels)} timed; slowest {top.kernel} {top.seconds * 1e3:.4f} ms "
                f"({', '.join(top.nodes) or 'no program node'}). Times are on the Kernels page"
                + (" and painted on the graph." if self.program is not None else "."))

    def _show_kernel_times(self, result: RunResult) -> None:
        """Kernel times into the Kernels page; their nodes' share painted as the program's run-time overlay."""
        wrapper = self.models[0].wrapper_entry if self.models else ""
        self.kernel_seconds = {(wrapper, k.line): k.seconds for k in result.kernel_times or []}
        self._show(self.outline.currentItem())
        if self.program is not None and result.node_times:
            self.program.run_panel.heat_changed.emit(dict(result.node_times))

    # -- the window's contract (app/graph/tab.py) ------------------------------------------------------------------
    def source_file(self) -> str | None:
        return self.path

    def current_program(self) -> DocumentWidget | None:
        return self.program

    def graphs(self) -> list[DocumentWidget]:
        return [self.program] if self.program is not None else []

    def can_save_program(self) -> bool:
        return True

    def program_file(self) -> str | None:
        return self.path if Path(self.path).is_file() else None

    def release(self) -> None:
        self.driver.cancel()
        if self.program is not None:
            self.program.release()
