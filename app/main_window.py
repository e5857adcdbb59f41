"""The main window: menus, document tabs, recent files, drag-and-drop. It assembles panels and holds no logic."""
from __future__ import annotations

import shutil
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QMenu,
    QMessageBox,
    QStackedWidget,
    QTabWidget,
)

from pt2_viewer.app import theme
from pt2_viewer.app.document.overlay_menu import fill_overlay_menu
from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget, show_weights_as_nodes
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.loader import ArchiveLoader, first_view_model
from pt2_viewer.app.graph.minimap import MiniMap
from pt2_viewer.app.graph.view_settings import bool_setting, weights_as_nodes_wanted
from pt2_viewer.app.jobs.worker_choice import apply_saved_choice
from pt2_viewer.app.platform.trust_dialog import confirm_run, not_trusted_message
from pt2_viewer.app.qt import application, later
from pt2_viewer.app.settings import app_settings
from pt2_viewer.app.window.closing import may_close
from pt2_viewer.app.window.comparisons import Comparisons
from pt2_viewer.app.window.opening import archive_tab, extra_panels
from pt2_viewer.app.window.recent_files import RecentFiles
from pt2_viewer.app.window.screen_fit import keep_on_screen
from pt2_viewer.app.window.script_open import open_chosen
from pt2_viewer.core.formats.probe import Probe
from pt2_viewer.core.formats.registry import Format, Opens, open_dialog_filter, recognise
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.platform import temp_dirs
from pt2_viewer.core.platform.trust import TrustStore

if TYPE_CHECKING:  # imported where used: opening a .pt2 needs none of the script, compare, decompose views
    from types import ModuleType

    from pt2_viewer.app.decompose.dialog import DecomposeDialog
    from pt2_viewer.app.export.script_document import ScriptDocument
    from pt2_viewer.app.start_page import StartPage

SWEEP_AFTER_MS = 1000
Shortcut = QKeySequence.StandardKey | str | list[QKeySequence.StandardKey | str] | None


class MainWindow(QMainWindow):
    """Emits `document_ready(DocumentWidget)` when a document's graph is first on screen, `open_failed(str)` when
    a file cannot be shown (with the user-facing message)."""

    document_ready = Signal(object)
    open_failed = Signal(str)

    def __init__(self, layouts: LayoutClient | None = None, interactive: bool = True,
                 trust_scripts: bool = False, remember_recent: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("PT2 Viewer")
        self.setAcceptDrops(True)
        self.interactive = interactive  # False for --screenshot and tests: no modal dialogs
        self.trust_scripts = trust_scripts  # run .py scripts without asking (the user named them for --screenshot)
        self.trust_store = TrustStore.default()
        apply_saved_choice()  # the worker chosen in Preferences, for jobs from the start (app/jobs/worker_choice.py)
        self.settings = app_settings()
        theme.apply_link_colors(application())  # links readable on a dark palette too
        self.layouts = layouts or LayoutClient(parent=self)
        self.loader = ArchiveLoader(self)
        self.loader.opened.connect(self._archive_loaded)  # read, as its format (core/formats/registry.py)
        self.loader.failed.connect(self.open_failed_message)
        # a program not opened before: its layouts will be needed; the layout child starts on the other core while
        # the program is read
        self.loader.not_seen_before.connect(lambda _path: self.layouts.service.prestart())
        self.loader.built.connect(self._model_built)
        self.wanted_program: str | None = None

        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(lambda _i: self._tab_changed())
        self.stack = QStackedWidget()
        self.stack.addWidget(self.tabs)
        # The start page is built when first shown (`start_page`): a window opened on a file shows its tab instead,
        # and a file being read shows the empty tabs, not the page for a moment.
        self._start_page: StartPage | None = None
        self._opening: Counter[str] = Counter()  # files read or indexed now (a file opened twice: twice), tabs to come
        self.setCentralWidget(self.stack)
        # Programs the app wrote (a script's export opened in its own tab) live as long as a tab shows them.
        self._pending_copies: dict[str, Path] = {}  # copied .pt2 being read -> its temporary folder
        self._owned_dirs: dict[object, Path] = {}  # tab widget -> the temporary folder it keeps alive
        # folders left by an app that crashed: swept on another thread once the window is up (a crowded temp folder
        # took 14 ms to list; a stale export may take seconds to delete)
        later(self, lambda: threading.Thread(
            target=temp_dirs.sweep_stale, name="sweep stale temporary folders", daemon=True).start(), SWEEP_AFTER_MS)
        self.statusBar().showMessage("Open a .pt2 archive (File > Open, or drop it here)")
        self.comparisons = Comparisons(self, self)  # Program menu: decompose, compare (app/window/comparisons.py)
        self._build_menus(remember_recent)
        self._update_actions(start_page=False)
        # Once the caller has opened what it had to (main.py opens the command line's files right after show()),
        # the start page is shown if nothing is open or opening.
        later(self, self._update_actions)
        keep_on_screen(self, self.settings.value("window/geometry"))  # app/window/screen_fit.py

    # -- menus -------------------------------------------------------------------------------------------------
    def _build_menus(self, remember_recent: bool) -> None:
        # The window owns every shortcut (the document and graph views define none), so Qt never finds two
        # owners for one key and the keys work wherever the focus is.
        file_menu = self.menuBar().addMenu("&File")
        self._add(file_menu, "&Open…", QKeySequence.StandardKey.Open, self.open_dialog)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_files = RecentFiles(self.settings, self.recent_menu, self.open_path, self._show_recent,
                                        remember=remember_recent)  # app/window/recent_files.py
        self.export_action = self._add(file_menu, "Export Graph as &SVG or PNG…", "Ctrl+Shift+E",
                                       lambda: _file_actions().export_graph_dialog(self, self))
        self.export_visible_action = self._add(
            file_menu, "Export &Visible Area as SVG or PNG…", None,
            lambda: _file_actions().export_graph_dialog(self, self, visible_only=True))
        self.report_action = self._add(file_menu, "Export &Report…", None,
                                       lambda: _file_actions().export_report_dialog(self, self))
        self.save_action = self._add(file_menu, "Save Program &As…", QKeySequence.StandardKey.SaveAs,
                                     self.save_program_dialog)
        file_menu.addSeparator()
        self.close_action = self._add(file_menu, "&Close Tab", QKeySequence.StandardKey.Close,
                                      lambda: self.close_tab(self.tabs.currentIndex()))
        self.preferences_action = self._add(file_menu, "&Preferences…", QKeySequence.StandardKey.Preferences,
                                            self._show_preferences)
        self._add(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        view = self.menuBar().addMenu("&View")
        self.view_actions = [
            self._add(view, "Zoom &In", [QKeySequence.StandardKey.ZoomIn, "Ctrl+="],
                      lambda: self._view_call(lambda d: d.view.zoom(1.25))),
            self._add(view, "Zoom &Out", QKeySequence.StandardKey.ZoomOut,
                      lambda: self._view_call(lambda d: d.view.zoom(0.8))),
            self._add(view, "&Fit", "Ctrl+0", lambda: self._view_call(lambda d: d.fit()))]
        view.addSeparator()
        self.view_actions += [
            self._add(view, "&Expand All Groups", "Ctrl+E", lambda: self._view_call(lambda d: d.expand_all())),
            self._add(view, "&Collapse All Groups", "Ctrl+Shift+C",
                      lambda: self._view_call(lambda d: d.collapse_all())),
            self._add(view, "&Find…", QKeySequence.StandardKey.Find, lambda: self._view_call(_focus_find))]
        view.addSeparator()
        self.view_actions += [
            self._add(view, "&Back", "Alt+Left", lambda: self._view_call(lambda d: d.tools.back())),
            self._add(view, "For&ward", "Alt+Right", lambda: self._view_call(lambda d: d.tools.forward())),
            self._add(view, "&Next Match", "F3", lambda: self._view_call(lambda d: d.tools.move_hit(1))),
            self._add(view, "&Previous Match", "Shift+F3", lambda: self._view_call(lambda d: d.tools.move_hit(-1)))]
        self.overlay_menu = view.addMenu("&Overlay")
        self.overlay_menu.aboutToShow.connect(
            lambda: fill_overlay_menu(self.overlay_menu, self.view_document(), self))
        self.minimap_action = self._add(view, "Show &Minimap", None, self.show_minimaps)
        self.minimap_action.setCheckable(True)
        self.minimap_action.setChecked(bool_setting(MiniMap.SETTING, True))
        self.weights_action = self._add(view, "Show &Weights as Nodes", None,
                                        lambda on: show_weights_as_nodes(self, on))  # app/graph/document.py
        self.weights_action.setCheckable(True)
        self.weights_action.setChecked(weights_as_nodes_wanted())
        program = self.menuBar().addMenu("&Program")
        self.program_actions = [
            self._add(program, "&Decompose…", "Ctrl+Shift+D", self.decompose_dialog),
            self._add(program, "&Lower to ExecuTorch…", None, self.lower_dialog),
            self._add(program, "Lower to &ONNX…", None, self.comparisons.lower_onnx_dialog),
            self._add(program, "&Compare With…", None, self.comparisons.compare_dialog),
            self._add(program, "Compare &Pipeline…", None, self.comparisons.pipeline_dialog),
            self._add(program, "&Run…", "Ctrl+R", lambda: self._doc_call(lambda d: d.show_run_panel()))]
        self.save_decomposed_action = self._add(program, "&Save Decomposed As…", None, self.save_decomposed_dialog)
        help_menu = self.menuBar().addMenu("&Help")
        self._add(help_menu, "&Keyboard Shortcuts", None, self._show_shortcuts)
        self._add(help_menu, "&About PT2 Viewer", None, self.about)

    @property
    def start_page(self) -> StartPage:
        """What the window shows with nothing open (app/start_page.py), built the first time it is shown."""
        if self._start_page is None:
            from pt2_viewer.app.start_page import StartPage

            page = StartPage()
            page.open_requested.connect(self.open_dialog)
            page.path_requested.connect(self.open_path)
            page.set_recent(self.recent())
            self.stack.addWidget(page)
            self._start_page = page
        return self._start_page

    def _show_recent(self, paths: list[str]) -> None:
        if self._start_page is not None:
            self._start_page.set_recent(paths)

    def _show_preferences(self) -> None:
        from pt2_viewer.app.jobs.preferences_dialog import open_preferences  # deferred: the dialog's widgets, probes

        open_preferences(self)

    def _show_shortcuts(self) -> None:
        from pt2_viewer.app.graph.shortcuts_dialog import show_shortcuts

        self.shortcuts = show_shortcuts(self)

    def show_minimaps(self, on: bool) -> None:
        """View > Show Minimap: for every graph, remembered for the next start."""
        MiniMap.remember_wanted(on)
        for minimap in self.findChildren(MiniMap):
            minimap.set_wanted(on)

    def _add(self, menu: QMenu, text: str, shortcut: Shortcut, slot: Callable[..., object]) -> QAction:
        action = QAction(text, self)
        if isinstance(shortcut, list):
            action.setShortcuts([QKeySequence(k) for k in shortcut])
        elif shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _doc_call(self, fn: Callable[[DocumentWidget], object]) -> None:
        doc = self.current_document()
        if doc is not None:
            fn(doc)

    def _view_call(self, fn: Callable[[DocumentWidget], object]) -> None:
        doc = self.view_document()
        if doc is not None:
            fn(doc)

    def view_document(self) -> DocumentWidget | None:
        """The graph that View menu keys act on: the one holding the focus in the current tab (a comparison has
        two), else the current tab's program."""
        tab = self.current_tab()
        graphs = tab.graphs() if tab is not None else []
        focus = QApplication.focusWidget()
        focused = [g for g in graphs if focus is not None and (g is focus or g.isAncestorOf(focus))]
        return (focused or graphs)[0] if focused or graphs else None

    def _update_actions(self, start_page: bool = True) -> None:
        """Menu entries that need a program are enabled only when the current tab shows one, the title names the
        tab; with no tab open or opening, the start page shows (with `start_page`)."""
        tab = self.current_tab()
        doc = self.current_document()
        if self.tabs.count() or self._opening or not start_page:
            self.stack.setCurrentWidget(self.tabs)
        else:
            self.stack.setCurrentWidget(self.start_page)
            self.start_page.set_recent(self.recent())
        for action in self.program_actions:
            action.setEnabled(doc is not None)
        viewable = self.view_document() is not None
        for action in self.view_actions:
            action.setEnabled(viewable)
        self.export_action.setEnabled(viewable)
        self.export_visible_action.setEnabled(viewable)
        self.save_action.setEnabled(tab is not None and tab.can_save_program())
        self.save_decomposed_action.setEnabled(tab is not None and tab.can_save_decomposed())
        self.close_action.setEnabled(tab is not None)
        title = self.tabs.tabText(self.tabs.currentIndex())
        self.setWindowTitle(f"{title} — PT2 Viewer" if tab is not None else "PT2 Viewer")

    def current_tab(self) -> DocumentTab | None:
        """The tab shown, through the one contract every tab keeps (app/graph/tab.py)."""
        return _tab(self.tabs.currentWidget())

    def shown_file(self) -> str | None:
        """The file the window shows now: the current tab's, or None on the start page."""
        tab = self.current_tab()
        return tab.source_file() if tab is not None and self.stack.currentWidget() is self.tabs else None

    def add_tab(self, tab: DocumentTab, title: str, tooltip: str = "") -> int:
        """Add `tab` and show it: only a `DocumentTab` can be a tab, so every tab keeps the window's contract. Its
        status messages reach the status bar while it is the current tab."""
        tab.status.connect(lambda text, t=tab: self._tab_status(t, text))
        index = self.tabs.addTab(tab, title)
        if tooltip:
            self.tabs.setTabToolTip(index, tooltip)
        self.tabs.setCurrentIndex(index)
        self._update_actions()
        return index

    def _tab_status(self, tab: DocumentTab, text: str) -> None:
        if tab is self.current_tab():
            self.statusBar().showMessage(text)

    def _tab_changed(self) -> None:
        """Another tab is shown: its own last status line (never the previous tab's), its menu entries."""
        tab = self.current_tab()
        if tab is not None:
            self.statusBar().showMessage(tab.status_text)
        self._update_actions()

    def current_document(self) -> DocumentWidget | None:
        """The program the Program menu acts on (the one shown inside a script's tab; none for a comparison)."""
        tab = self.current_tab()
        return tab.current_program() if tab is not None else None

    # -- opening -----------------------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        start = str(Path(self.recent()[0]).parent) if self.recent() else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open", start, open_dialog_filter())  # the registry's
        if path and not open_chosen(self, path):  # a script: export it, or run it with torch.compile's trace
            self.open_path(path)

    def open_path(self, path: str, program: str | None = None) -> None:
        p = Path(path).expanduser()
        self.wanted_program = program
        self.statusBar().showMessage(f"Reading {p.name}…")
        key = str(p.resolve()) if p.exists() else str(p)
        probe = Probe(key)  # what recognition reads (a zip's listing) is handed on to the reading thread
        opens = recognise(probe).opens_as
        if opens is Opens.SCRIPT:  # run by the export worker, after the trust question
            self.open_script(p)
            return
        if opens is Opens.TRACE:  # a torch.compile trace, read in a thread, its own tab (app/trace/opening.py)
            from pt2_viewer.app.trace.opening import open_trace  # deferred: the trace view's widgets

            open_trace(self, key)
            return
        self._opening[key] += 1
        self.loader.load(key, probe)

    def _archive_loaded(self, path: str, archive: Archive, fmt: Format) -> None:
        self.recent_files.remember(path)
        if not archive.programs:
            self._done_opening(path)
            tab = archive_tab(fmt, path, archive, None, interactive=self.interactive, trust=self.trust_store)
            self._own_pending_copy(path, tab)
            self.add_tab(tab, Path(path).name, path)
            tab.status.emit(f"{Path(path).name}: AOTInductor package, no program graph")
            self.document_ready.emit(None)
            return
        names = [p.name for p in archive.programs]
        name = self.wanted_program
        if name is not None and name not in names:
            self.open_failed_message(path, f"'{Path(path).name}' has no program named '{name}'. It holds: "
                                     f"{', '.join(names)}.")
            return
        if name is None:
            name = names[0]
            if len(names) > 1 and self.interactive:
                picked, ok = QInputDialog.getItem(self, "Choose a program",
                                                  f"{Path(path).name} holds {len(names)} programs:", names, 0, False)
                if not ok:
                    self._drop_pending_copy(path)
                    self.statusBar().clearMessage()
                    self._opened(path)
                    return
                name = picked
        if (shown := self._showing(path, name)) is not None:  # already open: its tab, not a second one
            self._done_opening(path)
            self.tabs.setCurrentWidget(shown)
            self.statusBar().showMessage(f"{Path(path).name} is already open in this tab.")
            self.document_ready.emit(shown.current_program())
            return
        self.statusBar().showMessage(f"Indexing {Path(path).name}…")
        self.loader.run(path, lambda: (fmt, first_view_model(archive, name, self.layouts.service)),
                        "index")  # still opening: `_model_built` ends it

    def _showing(self, path: str, program: str) -> DocumentTab | None:
        """The tab that shows `program` of the file `path` as its own (not one side of a comparison), if any."""
        tabs = [t for i in range(self.tabs.count()) if (t := _tab(self.tabs.widget(i))) is not None]
        return next((t for t in tabs if (d := t.current_program()) is not None and d.model.archive.path == path
                     and d.model.program.name == program), None)

    def _done_opening(self, path: str) -> None:
        self._opening[path] -= 1
        if self._opening[path] <= 0:
            del self._opening[path]

    def _opened(self, path: str) -> None:
        """`path` is read (or could not be): with nothing else opening and no tab, the start page comes back."""
        self._done_opening(path)
        if not self._opening and not self.tabs.count():
            self._update_actions()

    def _model_built(self, path: str, built: tuple[Format, DocumentModel]) -> None:
        self._done_opening(path)
        fmt, model = built
        doc = DocumentWidget(model, self.layouts, interactive=self.interactive,
                             extra_panels=extra_panels(model.archive))
        doc.layout_failed.connect(lambda msg: self.warn("Layout failed", msg))
        doc.graph_ready.connect(lambda d=doc: self.document_ready.emit(d), Qt.ConnectionType.SingleShotConnection)
        doc.compare_requested.connect(
            lambda decomposition, node, d=doc: self.comparisons.numerics_compare(d, decomposition, node))
        several = len(model.archive.programs) > 1
        title = Path(path).name + (f" [{model.program.name}]" if several else "")
        # an AOTInductor package that holds its program too: the compiled models' tab, the graph beside them
        tab = archive_tab(fmt, path, model.archive, doc, interactive=self.interactive, trust=self.trust_store)
        copy = self._own_pending_copy(path, tab)
        self.add_tab(tab, title, path if not copy else f"{path}\n(a copy kept while this tab is open; "
                     "File > Save Program As… to keep it)")
        doc.start()  # connected: a program opened before is drawn now, its layouts read on the loader's thread

    def _own_pending_copy(self, path: str, tab: DocumentTab) -> bool:
        """A copy the app made to open (`open_copy`) lives as long as the tab that shows it; True if it is one."""
        folder = self._pending_copies.pop(path, None)
        if folder is not None:
            self._owned_dirs[tab] = folder
        return folder is not None

    def open_script(self, path: Path) -> ScriptDocument | None:
        """Run a model script in the export worker (after the trust question) and show its tab."""
        if not path.is_file():
            self.open_failed_message(str(path), f"'{path}' does not exist or is not a file. Check the path.")
            return None
        path = path.resolve()
        if not confirm_run(self, path, self.trust_store, interactive=self.interactive,
                           trust_scripts=self.trust_scripts):
            if self.interactive:
                self.statusBar().showMessage(f"{path.name} was not run.")
            else:
                self.open_failed_message(str(path), not_trusted_message(path))
            return None
        self.recent_files.remember(str(path))
        from pt2_viewer.app.export.script_document import ScriptDocument  # deferred: Qt view (test_lazy_imports)

        doc = ScriptDocument(path, self.layouts, interactive=self.interactive)
        doc.document_ready.connect(self.document_ready.emit)
        doc.open_failed.connect(lambda message: self.open_failed_message(str(path), message))
        doc.open_in_new_tab.connect(self.open_copy)
        doc.document_ready.connect(lambda _d: self._update_actions())
        self.add_tab(doc, path.name, str(path))
        doc.start()
        return doc

    def open_copy(self, path: str) -> None:
        """Open a program the app produced (a script's export) in its own tab, from a copy that lives as long as
        that tab: the script's run folders go when the script's tab closes or runs again."""
        folder = temp_dirs.new_dir("program")
        copy = folder / Path(path).name
        try:
            shutil.copyfile(path, copy)
        except OSError as e:
            temp_dirs.remove(folder)
            self.open_failed_message(path, f"Could not copy '{Path(path).name}' to open it: {e.strerror or e}.")
            return
        self._pending_copies[str(copy)] = folder
        self.open_path(str(copy))

    def _drop_pending_copy(self, path: str) -> None:
        temp_dirs.remove(self._pending_copies.pop(path, None))

    def open_failed_message(self, path: str, message: str) -> None:
        """`path` could not be opened (or compared): say so in the status bar, emit `open_failed`, and warn."""
        self._drop_pending_copy(path)
        self._opened(path)
        self.statusBar().showMessage(f"Could not open {Path(path).name}")
        self.open_failed.emit(message)
        self.warn("Cannot open file", message)

    def warn(self, title: str, message: str) -> None:
        if self.interactive:
            QMessageBox.warning(self, title, message)

    def close_tab(self, index: int) -> None:
        w = self.tabs.widget(index)
        if (tab := _tab(w)) is not None and not may_close(self, self, [tab]):  # unsaved work: asked first
            return
        if w is not None:
            self._release(w)
            self.tabs.removeTab(index)
            w.deleteLater()
        self._update_actions()

    def _release(self, w: object) -> None:
        """A tab is going: stop its jobs and remove the temporary folders only it used."""
        tab = _tab(w)
        if tab is not None:
            tab.release()
            temp_dirs.remove(self._owned_dirs.pop(tab, None))

    # -- recent files (app/window/recent_files.py) --------------------------------------------------------------
    def recent(self) -> list[str]:
        return self.recent_files.paths()

    # -- drag and drop -----------------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
        event.acceptProposedAction()

    # -- Program menu (app/window/comparisons.py), File menu's saving dialogs (app/window/file_actions.py) -------
    def decompose_dialog(self) -> DecomposeDialog | None:
        return self.comparisons.decompose_dialog()

    def compare_dialog(self) -> None:
        self.comparisons.compare_dialog()

    def lower_dialog(self) -> object:
        """Program > Lower to ExecuTorch… (app/deploy/lower_dialog.py): the .pte opens beside its source."""
        return self.comparisons.lower_dialog()

    def compare_with(self, doc: DocumentWidget, archive: Archive, program: Program) -> None:
        self.comparisons.compare_with(doc, archive, program)

    def save_decomposed_dialog(self) -> None:
        _file_actions().save_decomposed_dialog(self)

    def save_program_dialog(self) -> None:
        _file_actions().save_program_dialog(self, self)

    def about(self) -> None:
        QMessageBox.about(self, "About PT2 Viewer",
                          "PT2 Viewer: look inside torch.export programs.\nReads .pt2 archives without torch.")

    def closeEvent(self, event: QCloseEvent) -> None:
        tabs = [t for i in range(self.tabs.count()) if (t := _tab(self.tabs.widget(i))) is not None]
        if not may_close(self, self, tabs, quitting=True):  # Cancel, or a save not made: nothing closes
            event.ignore()
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        for tab in tabs:
            self._release(tab)
        self.layouts.close()
        super().closeEvent(event)


def _tab(widget: object) -> DocumentTab | None:
    """`widget` as a tab of the window: every tab is a `DocumentTab` (`MainWindow.add_tab`)."""
    return widget if isinstance(widget, DocumentTab) else None


def _focus_find(doc: DocumentWidget) -> None:
    doc.find.setVisible(True)
    doc.find.setFocus()
    doc.find.selectAll()


def _file_actions() -> ModuleType:
    """File menu's export and save dialogs, imported when first used (they bring the SVG and image writers)."""
    from pt2_viewer.app.window import file_actions

    return file_actions
