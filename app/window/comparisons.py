"""The Program menu's second views of a program: Decompose…, Compare With…, and the Numerics tab's "Compare view at
first divergence". Each opens the two programs side by side in a new tab of the window (app/compare/view.py), their
document models built off the GUI thread first (app/graph/loader.py), as for any program opened. Compare Pipeline…
opens a program, its core ATen decomposition and its `.pte` as a chain of panes (app/compare/chain.py)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QTabWidget, QWidget

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.loader import ArchiveLoader
from pt2_viewer.core.model.program import Archive, Program

if TYPE_CHECKING:  # imported where used: opening a .pt2 needs none of the compare and decompose views
    from pt2_viewer.app.compare.chain import ChainView
    from pt2_viewer.app.compare.view import ComparePlan, CompareView
    from pt2_viewer.app.decompose.dialog import DecomposeDialog
    from pt2_viewer.app.deploy.onnx_lower_dialog import OnnxFile
    from pt2_viewer.app.deploy.pte_saving import LoweredFiles
    from pt2_viewer.app.document.tab import DocumentTab
    from pt2_viewer.core.compare.decomposition import Decomposition
    from pt2_viewer.core.diff.chain import Chain
    from pt2_viewer.core.jobs.schemas.lower import LowerResult
# The comparison models, the diff and the delegation overlay are imported where used too: the window's start-up
# needs none of them (test_lazy_imports).


class Window(Protocol):
    """What the comparisons need of the main window."""

    tabs: QTabWidget
    layouts: LayoutClient
    interactive: bool

    def current_document(self) -> DocumentWidget | None: ...

    def add_tab(self, tab: DocumentTab, title: str, tooltip: str = "") -> int: ...

    def open_failed_message(self, path: str, message: str) -> None: ...


class Comparisons:
    """Opens comparisons as tabs of `window` (which is also the parent of their dialogs and loaders)."""

    def __init__(self, window: Window, parent: QWidget) -> None:
        self.window = window
        self.parent = parent

    def decompose_dialog(self) -> DecomposeDialog | None:
        doc = self.window.current_document()
        if doc is None:
            return None
        from pt2_viewer.app.decompose.dialog import DecomposeDialog  # deferred: Qt view (test_lazy_imports)

        dialog = DecomposeDialog(doc.model.archive.path, doc.model.program.name, interactive=self.window.interactive,
                                 parent=self.parent)
        dialog.decomposed.connect(lambda decomposition, archive: self.open_decomposition(doc, decomposition, archive))
        dialog.show()
        return dialog

    def lower_dialog(self) -> QWidget | None:
        """Program > Lower to ExecuTorch…: the source painted delegated / not delegated, its .pte opened beside it."""
        doc = self.window.current_document()
        if doc is None:
            return None
        from pt2_viewer.app.deploy.lower_dialog import LowerDialog  # deferred: Qt view (test_lazy_imports)

        dialog = LowerDialog(doc, interactive=self.window.interactive, parent=self.parent)
        dialog.lowered.connect(lambda result, archive: self.open_lowered(doc, result, archive, dialog.attach,
                                                                         dialog.files))
        dialog.show()
        return dialog

    def open_lowered(self, doc: DocumentWidget, result: LowerResult, pte: Archive,
                     attach: Callable[[DocumentWidget, DocumentWidget], None] | None = None,
                     files: LoweredFiles | None = None) -> None:
        """A .pte beside its source, linked through the ETRecord's debug handles, the source painted by delegation;
        with `files` (the Lower dialog's, in its temporary folder), a tab that saves them and asks before closing
        while they are unsaved (app/window/lowered_tab.py)."""
        from pt2_viewer.app.compare.view import ComparePlan  # deferred: Qt view (test_lazy_imports)
        from pt2_viewer.app.window.lowered_tab import LoweredView
        from pt2_viewer.core.compare.session import LEFT, RIGHT, LinkedDocumentModel
        from pt2_viewer.core.deploy.delegation import delegation_overlay, lowered_session

        source = doc.model.archive
        session = lowered_session(doc.model.program, pte.program(), dict(result.source_to_pte or {}),
                                  f"{Path(source.path).name} [{doc.model.program.name}]", Path(pte.path).name)
        models = (LinkedDocumentModel(source, session.left), LinkedDocumentModel(pte, session.right))

        def make(plan: ComparePlan) -> CompareView:
            view = LoweredView.from_plan(plan, self.window.layouts, interactive=self.window.interactive)
            assert isinstance(view, LoweredView)  # from_plan makes its own class
            view.files = files
            return view

        def then(view: CompareView) -> None:
            view.docs[LEFT].tools.add_overlay(delegation_overlay(result))
            if attach is not None:
                attach(view.docs[LEFT], view.docs[RIGHT])

        self._open(Path(pte.path).name, lambda: ComparePlan(session, source, pte, models), then, make)

    def lower_onnx_dialog(self) -> QWidget | None:
        """Program > Lower to ONNX…: the job's .onnx opens beside its source as source | ONNX (open_onnx_chain)."""
        doc = self.window.current_document()
        if doc is None:
            return None
        from pt2_viewer.app.deploy.onnx_lower_dialog import OnnxLowerDialog  # deferred: Qt view (test_lazy_imports)

        dialog = OnnxLowerDialog(doc, interactive=self.window.interactive, parent=self.parent)
        dialog.lowered.connect(lambda result: self.open_onnx_chain(doc, str(result.onnx), dialog.file))
        dialog.show()
        return dialog

    def open_onnx_chain(self, doc: DocumentWidget, onnx: str, file: OnnxFile | None = None, core: str | None = None
                        ) -> None:
        """Source | ONNX (or source | core ATen `core` | ONNX) in a new tab, each pair diffed, selection synced through
        the links the file's metadata holds (core/diff/onnx_stage.py); with `file` (the Lower dialog's, in its
        temporary folder), a tab that saves it and asks before closing while it is unsaved
        (app/window/lowered_tab.py)."""
        from pt2_viewer.app.window.lowered_tab import LoweredOnnxView
        from pt2_viewer.core.diff.onnx_stage import read_onnx_pipeline

        def make(chain: Chain) -> ChainView:
            view = LoweredOnnxView(chain, self.window.layouts, interactive=self.window.interactive)
            view.file = file
            return view

        archive, program = doc.model.archive, doc.model.program
        self._open_chain(onnx, lambda: read_onnx_pipeline(archive, program, onnx, core), make if file else None)

    def compare_dialog(self) -> None:
        doc = self.window.current_document()
        if doc is None:
            return
        tabs = self.window.tabs
        others = {f"{tabs.tabText(i)} ({i + 1})": w for i in range(tabs.count())
                  if isinstance(w := tabs.widget(i), DocumentWidget) and w is not doc}
        from pt2_viewer.app.compare.view import ask_comparison_target  # deferred: Qt view (test_lazy_imports)

        target = ask_comparison_target(self.parent, others)
        if isinstance(target, DocumentWidget):
            self.compare_with(doc, target.model.archive, target.model.program)
        elif target:
            loader = self._loader()
            loader.loaded.connect(lambda path, archive: self.compare_with(doc, archive, archive.program())
                                  if archive.programs else self.window.open_failed_message(
                                      path, f"'{Path(path).name}' holds no program graph to compare."))
            loader.load(target)

    def pipeline_dialog(self) -> None:
        """Program > Compare Pipeline…: the program, its core ATen decomposition and its `.pte` (or its `.onnx`, the
        core ATen stage then optional) as a chain of panes (app/compare/chain.py), the files asked for."""
        doc = self.window.current_document()
        if doc is None:
            return
        from pt2_viewer.app.compare.chain import ask_pipeline_files  # deferred: Qt view (test_lazy_imports)

        files = ask_pipeline_files(self.parent)
        if files is not None and files[1].lower().endswith(".onnx"):
            self.open_onnx_chain(doc, files[1], core=files[0] or None)
        elif files is not None:
            self.open_chain(doc, *files)

    def open_chain(self, doc: DocumentWidget, core: str, pte: str, etrecord: str | None = None,
                   source_to_pte: dict[str, list[str]] | None = None) -> None:
        """Source | core ATen | `.pte` in a new tab, each adjacent pair diffed, selection synced through the chain."""
        from pt2_viewer.core.diff.chain import read_pipeline

        archive, program = doc.model.archive, doc.model.program
        self._open_chain(pte, lambda: read_pipeline(archive, program, core, pte, etrecord, source_to_pte))

    def _open_chain(self, last: str, build: Callable[[], object],
                    make: Callable[[Chain], ChainView] | None = None) -> None:
        """A chain built off the GUI thread (`build`: a Chain, or a one-line message about `last`, its last file)
        and shown in a new tab (made by `make`, by default a ChainView)."""
        from pt2_viewer.app.compare.chain import ChainView  # deferred: Qt view (test_lazy_imports)
        from pt2_viewer.core.diff.chain import Chain

        def show(_key: str, built: object) -> None:
            if not isinstance(built, Chain):
                self.window.open_failed_message(last, str(built))
                return
            view = make(built) if make is not None else ChainView(built, self.window.layouts,
                                                                  interactive=self.window.interactive)
            self.window.add_tab(view, view.title())

        builder = self._loader()
        builder.built.connect(show)
        builder.run(Path(last).name, build, "compare")

    def numerics_compare(self, doc: DocumentWidget, decomposition: Decomposition, node: str) -> None:
        """The Numerics tab's decomposed candidate beside the original, both sides on the first divergence. The
        candidate stays in the Numerics job's folder, which closing the comparison leaves alone (the decomposition
        says whose it is)."""
        from pt2_viewer.core.compare.session import LEFT

        def select(view: CompareView) -> None:
            view.left.reveal(node)
            view.select(LEFT, node)

        loader = self._loader()
        loader.loaded.connect(lambda _path, archive: self.open_decomposition(doc, decomposition, archive, then=select))
        loader.load(decomposition.output)

    def open_decomposition(self, doc: DocumentWidget, decomposition: Decomposition, decomposed: Archive,
                           then: Callable[[CompareView], None] | None = None) -> None:
        """The original beside its decomposition in a new tab."""
        from pt2_viewer.app.compare.view import plan_decomposition  # deferred: Qt view (test_lazy_imports)

        archive, program = doc.model.archive, doc.model.program
        self._open(decomposition.output, lambda: plan_decomposition(archive, program, decomposition, decomposed), then)

    def compare_with(self, doc: DocumentWidget, archive: Archive, program: Program) -> None:
        """Any two programs side by side in a new tab."""
        from pt2_viewer.app.compare.view import plan_programs  # deferred: Qt view (test_lazy_imports)

        left = (doc.model.archive, doc.model.program)
        self._open(Path(archive.path).name, lambda: plan_programs(left, (archive, program)))

    def _open(self, key: str, plan: Callable[[], ComparePlan], then: Callable[[CompareView], None] | None = None,
              make: Callable[[ComparePlan], CompareView] | None = None) -> None:
        from pt2_viewer.app.compare.view import ComparePlan, CompareView  # deferred: Qt view (test_lazy_imports)

        def show(_key: str, built: object) -> None:
            assert isinstance(built, ComparePlan)  # what `plan` returned, handed back by the loader
            view = make(built) if make is not None else CompareView.from_plan(
                built, self.window.layouts, interactive=self.window.interactive)
            self.window.add_tab(view, view.title())
            if then is not None:
                then(view)

        builder = self._loader()
        builder.built.connect(show)
        builder.run(key, plan, "compare")

    def _loader(self) -> ArchiveLoader:
        loader = ArchiveLoader(self.parent)
        loader.failed.connect(self.window.open_failed_message)
        return loader
