"""Opening a torch.compile trace in the window (a `TORCH_TRACE` folder or one of its logs, as the format registry
recognises it: File > Open, the command line, drag-and-drop): the trace is read in a thread, as a big `.pt2` is
(app/graph/loader.py), so a big trace never freezes the window; its tab (app/trace/tab.py) is added when it is read.
A trace already open shows its tab again. A trace that cannot be read at all is one line, as any file is.

A graph double-clicked in the trace's tab opens in the graph view in a tab of its own (app/trace/graph_tab.py): its
program is read from the graph's text and indexed in a thread too (core/trace/outline.py `graph_archive`,
`first_view_model`), as a `.pt2` is."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtWidgets import QStatusBar, QTabWidget

from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.loader import first_view_model
from pt2_viewer.app.trace.graph_tab import CompiledGraphTab
from pt2_viewer.app.trace.tab import TraceTab
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.trace import outline
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.model import Compile, Trace
from pt2_viewer.core.trace.outline import GraphEntry
from pt2_viewer.core.trace.reader import read_trace


class Recent(Protocol):
    def remember(self, path: str) -> None: ...


class Window(Protocol):
    """What opening a trace needs of the main window."""

    tabs: QTabWidget
    document_ready: SignalInstance
    layouts: LayoutClient
    interactive: bool

    @property
    def recent_files(self) -> Recent: ...

    def add_tab(self, tab: DocumentTab, title: str, tooltip: str = "") -> int: ...

    def open_failed_message(self, path: str, message: str) -> None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 (Qt's name)


class Background(QObject):
    """`start(work)` runs `work()` in a thread: `done(result)` or `failed(message)` on the GUI thread. A trace's
    problem (TraceError) or a file's (OSError) is its one line; anything else says it is an internal error."""

    done = Signal(object)
    failed = Signal(str)

    def start(self, work: Callable[[], object], what: str) -> None:
        threading.Thread(target=self._run, args=(work, what), daemon=True, name=what).start()

    def _run(self, work: Callable[[], object], what: str) -> None:
        try:
            result = work()
        except TraceError as e:
            self.failed.emit(str(e))
        except OSError as e:
            self.failed.emit(f"Could not {what}: {e.strerror or e}. Check its permissions.")
        except Exception as e:  # a reader bug must not take the window down; say what happened
            self.failed.emit(f"Could not {what}: internal error {type(e).__name__}: {e}")
        else:
            self.done.emit(result)


def _in_background(window: Window, work: Callable[[], object], what: str, done: Callable[[object], None],
                   failed: Callable[[str], None]) -> Background:
    job = Background(window.tabs)
    job.done.connect(done)
    job.failed.connect(failed)
    for ended in (job.done, job.failed):
        ended.connect(job.deleteLater)
    job.start(work, what)
    return job


def open_trace(window: Window, path: str) -> Background | None:
    """Read the trace at `path` off the GUI thread and show it in a tab (`document_ready(None)` once shown); a trace
    already open: its tab, at once (None returned)."""
    shown = _tab_where(window, lambda tab: isinstance(tab, TraceTab) and _same(tab.trace.path, path))
    if shown is not None:
        window.tabs.setCurrentWidget(shown)
        window.document_ready.emit(None)
        return None

    def read(trace: object) -> None:
        assert isinstance(trace, Trace)
        window.recent_files.remember(path)
        tab = TraceTab(trace)
        tab.graph_opened.connect(lambda compile_, graph: open_graph(window, tab, compile_, graph))
        tab.nodes_opened.connect(lambda compile_, graph, nodes, kernel:
                                 open_graph(window, tab, compile_, graph, nodes, kernel))
        tab.compare_requested.connect(lambda before, after: compare_graphs(window, tab, before, after))
        window.add_tab(tab, Path(path).name, path)
        window.document_ready.emit(None)

    return _in_background(window, lambda: read_trace(path), f"read the trace '{path}'", read,
                          lambda message: window.open_failed_message(path, message))


def open_graph(window: Window, tab: TraceTab, compile_: Compile, graph: GraphEntry,
               nodes: Sequence[str] = (), kernel: str = "") -> Background | None:
    """Open a compile's graph in the graph view, in its own tab (one already open: that tab), with `nodes` (a
    kernel's) selected and marked; Inductor's code is shown as text by the trace's tab, and is no graph (None
    returned). A graph that cannot be read is said in one line where its text is shown. Its nodes a kernel computes
    offer Show Kernel, which shows that kernel in the trace's tab."""
    if graph.is_code:
        return None
    trace = tab.trace
    title = f"{compile_.id} {graph.title}" + (f" (rank {compile_.rank})" if compile_.rank is not None else "")
    shown = _tab_where(window, lambda tab: isinstance(tab, CompiledGraphTab) and tab.objectName() == title
                       and _same(trace.path, tab.model.archive.path))
    if shown is not None:
        window.tabs.setCurrentWidget(shown)
        if nodes and isinstance(shown, CompiledGraphTab):
            select_nodes(shown, nodes, kernel)
        return None
    window.statusBar().showMessage(f"Reading {title}…")

    def build() -> DocumentModel:
        archive = outline.graph_archive(trace, compile_, graph)
        return first_view_model(archive, archive.programs[0].name, window.layouts.service)

    def built(model: object) -> None:
        assert isinstance(model, DocumentModel)
        doc = CompiledGraphTab(model, window.layouts, interactive=window.interactive)
        doc.setObjectName(title)
        doc.kernel_nodes = tab.kernel_nodes(compile_, graph)
        doc.kernel_requested.connect(lambda node: _show_kernel(window, tab, compile_, graph, node))
        if nodes:
            doc.graph_ready.connect(lambda: select_nodes(doc, nodes, kernel), Qt.ConnectionType.SingleShotConnection)
        doc.graph_ready.connect(lambda d=doc: window.document_ready.emit(d))
        window.add_tab(doc, f"{Path(trace.path).name} {title}", f"{title} of {trace.path}")
        doc.start()

    return _in_background(window, build, f"open {title}", built, tab.say)


def select_nodes(doc: CompiledGraphTab, nodes: Sequence[str], kernel: str = "") -> list[str]:
    """Mark `nodes` (a kernel's) in an open graph and select the first, with the step bar going through them; the
    nodes the graph does not draw (a getitem folded into what it reads) are left out. Returns those selected."""
    present = [n for n in nodes if n in doc.model.level.graph.node_by_name]
    if present:
        doc.tools.go_through_marked(present, kernel or "the kernel's nodes")
        doc.reveal(present[0])
    return present


def _show_kernel(window: Window, tab: TraceTab, compile_: Compile, graph: GraphEntry, node: str) -> None:
    if tab.show_kernel_of(compile_, graph, node):
        window.tabs.setCurrentWidget(tab)


def compare_graphs(window: Window, tab: TraceTab, before: Compile, after: Compile) -> Background:
    """The Dynamo graphs of a recompile and of the compile it replaced side by side, paired and coloured by the
    structural diff (app/compare/view.py, core/diff/), as any two programs are compared."""
    from pt2_viewer.app.compare.view import ComparePlan, CompareView, plan_programs  # deferred: Qt view, the diff

    dynamo = [next((g for g in outline.graphs(c) if g.kind == "dynamo"), None) for c in (before, after)]
    title = f"{Path(tab.trace.path).name} {before.id} ⟷ {after.id}"

    def plan() -> object:
        sides = [outline.graph_archive(tab.trace, c, g) for c, g in zip((before, after), dynamo) if g is not None]
        if len(sides) < 2:
            raise TraceError(f"{before.id} or {after.id} made no Dynamo graph to compare")
        left, right = sides
        return plan_programs((left, left.programs[0]), (right, right.programs[0]))

    def built(planned: object) -> None:
        assert isinstance(planned, ComparePlan)
        view = CompareView.from_plan(planned, window.layouts, interactive=window.interactive)
        window.add_tab(view, title, f"{title}: Dynamo graphs")

    window.statusBar().showMessage(f"Comparing {before.id} with {after.id}…")
    return _in_background(window, plan, f"compare {before.id} with {after.id}", built, tab.say)


def _tab_where(window: Window, test: Callable[[object], bool]) -> DocumentTab | None:
    tabs = [window.tabs.widget(i) for i in range(window.tabs.count())]
    return next((t for t in tabs if isinstance(t, DocumentTab) and test(t)), None)


def _same(a: Path | str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return str(a) == b
