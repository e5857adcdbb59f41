"""The main window: menus, document tabs, recent files, drag-and-drop. It assembles panels and holds no logic."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QTextBrowser,
)

from app.document import DocumentWidget
from app.export_image import export_scene
from app.layout_client import LayoutClient
from app.loader import ArchiveLoader
from core.document_model import DocumentModel
from core.program import Archive

OPENABLE = (".pt2",)
MAX_RECENT = 10


class MainWindow(QMainWindow):
    """Emits `document_ready(DocumentWidget)` when a document's graph is first on screen, `open_failed(str)` when
    a file cannot be shown (with the user-facing message)."""

    document_ready = Signal(object)
    open_failed = Signal(str)

    def __init__(self, layouts: LayoutClient | None = None, interactive: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("PT2 Viewer")
        self.resize(1400, 900)
        self.setAcceptDrops(True)
        self.interactive = interactive  # False for --screenshot and tests: no modal dialogs
        self.settings = QSettings("pt2-viewer", "PT2 Viewer")
        self.layouts = layouts or LayoutClient(parent=self)
        self.loader = ArchiveLoader(self)
        self.loader.loaded.connect(self._archive_loaded)
        self.loader.failed.connect(self._open_failed)
        self.wanted_program: str | None = None

        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.setCentralWidget(self.tabs)
        self.statusBar().showMessage("Open a .pt2 archive (File > Open, or drop it here)")
        self._build_menus()
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)

    # -- menus -------------------------------------------------------------------------------------------------
    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._add(file_menu, "&Open…", QKeySequence.StandardKey.Open, self.open_dialog)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self._fill_recent()
        self._add(file_menu, "Export Graph as &SVG or PNG…", "Ctrl+Shift+E", self.export_dialog)
        file_menu.addSeparator()
        self._add(file_menu, "&Close Tab", QKeySequence.StandardKey.Close, lambda: self.close_tab(self.tabs.currentIndex()))
        self._add(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        view = self.menuBar().addMenu("&View")
        self._add(view, "Zoom &In", QKeySequence.StandardKey.ZoomIn, lambda: self._doc_call(lambda d: d.view.zoom(1.25)))
        self._add(view, "Zoom &Out", QKeySequence.StandardKey.ZoomOut, lambda: self._doc_call(lambda d: d.view.zoom(0.8)))
        self._add(view, "&Fit", "Ctrl+0", lambda: self._doc_call(lambda d: d.view.fit()))
        view.addSeparator()
        self._add(view, "&Expand All Groups", "Ctrl+E", lambda: self._doc_call(lambda d: d.expand_all()))
        self._add(view, "&Collapse All Groups", "Ctrl+Shift+C", lambda: self._doc_call(lambda d: d.collapse_all()))
        self._add(view, "&Find…", QKeySequence.StandardKey.Find, lambda: self._doc_call(lambda d: d.find.setFocus()))
        help_menu = self.menuBar().addMenu("&Help")
        self._add(help_menu, "&About PT2 Viewer", None, self.about)

    def _add(self, menu, text, shortcut, slot) -> QAction:  # type: ignore[no-untyped-def]
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _doc_call(self, fn) -> None:  # type: ignore[no-untyped-def]
        doc = self.current_document()
        if doc is not None:
            fn(doc)

    def current_document(self) -> DocumentWidget | None:
        w = self.tabs.currentWidget()
        return w if isinstance(w, DocumentWidget) else None

    # -- opening -----------------------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        start = str(Path(self.recent()[0]).parent) if self.recent() else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open", start, "PyTorch export archives (*.pt2);;All files (*)")
        if path:
            self.open_path(path)

    def open_path(self, path: str, program: str | None = None) -> None:
        p = Path(path).expanduser()
        self.wanted_program = program
        self.statusBar().showMessage(f"Reading {p.name}…")
        if p.suffix == ".py":
            self._open_failed(str(p), f"'{p.name}' is a Python script. Opening scripts needs the export worker, "
                                      "which is not part of this build yet; export it with torch.export.save and "
                                      "open the .pt2.")
            return
        self.loader.load(str(p.resolve()) if p.exists() else str(p))

    def _archive_loaded(self, path: str, archive: Archive) -> None:
        self._remember(path)
        if not archive.programs:
            self._show_text_tab(Path(path).name, _aoti_text(archive))
            self.statusBar().showMessage(f"{Path(path).name}: AOTInductor package, no program graph")
            self.document_ready.emit(None)
            return
        names = [p.name for p in archive.programs]
        name = self.wanted_program
        if name is not None and name not in names:
            self._open_failed(path, f"'{Path(path).name}' has no program named '{name}'. It holds: {', '.join(names)}.")
            return
        if name is None:
            name = names[0]
            if len(names) > 1 and self.interactive:
                picked, ok = QInputDialog.getItem(self, "Choose a program",
                                                  f"{Path(path).name} holds {len(names)} programs:", names, 0, False)
                if not ok:
                    self.statusBar().clearMessage()
                    return
                name = picked
        doc = DocumentWidget(DocumentModel(archive, archive.program(name)), self.layouts)
        doc.status.connect(self.statusBar().showMessage)
        doc.layout_failed.connect(lambda msg: self._warn("Layout failed", msg))
        doc.graph_ready.connect(lambda d=doc: self.document_ready.emit(d), Qt.ConnectionType.SingleShotConnection)
        title = Path(path).name + (f" [{name}]" if len(names) > 1 else "")
        index = self.tabs.addTab(doc, title)
        self.tabs.setTabToolTip(index, path)
        self.tabs.setCurrentIndex(index)
        self.setWindowTitle(f"{title} — PT2 Viewer")

    def _open_failed(self, path: str, message: str) -> None:
        self.statusBar().showMessage(f"Could not open {Path(path).name}")
        self.open_failed.emit(message)
        self._warn("Cannot open file", message)

    def _warn(self, title: str, message: str) -> None:
        if self.interactive:
            QMessageBox.warning(self, title, message)

    def _show_text_tab(self, title: str, text: str) -> None:
        view = QTextBrowser()
        view.setPlainText(text)
        self.tabs.setCurrentIndex(self.tabs.addTab(view, title))

    def close_tab(self, index: int) -> None:
        w = self.tabs.widget(index)
        if w is not None:
            self.tabs.removeTab(index)
            w.deleteLater()

    # -- recent files ------------------------------------------------------------------------------------------
    def recent(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]

    def _remember(self, path: str) -> None:
        items = [path] + [p for p in self.recent() if p != path]
        self.settings.setValue("recent", items[:MAX_RECENT])
        self._fill_recent()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(self.recent()))

    # -- drag and drop -----------------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
        event.acceptProposedAction()

    # -- other -------------------------------------------------------------------------------------------------
    def export_dialog(self) -> None:
        doc = self.current_document()
        if doc is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export graph", "graph.svg", "SVG (*.svg);;PNG (*.png)")
        if path:
            try:
                export_scene(doc.view.scene(), path)
            except OSError as e:
                self._warn("Export failed", f"Could not write '{path}': {e}")
            else:
                self.statusBar().showMessage(f"Saved {path}")

    def about(self) -> None:
        QMessageBox.about(self, "About PT2 Viewer",
                          "PT2 Viewer: look inside torch.export programs.\nReads .pt2 archives without torch.")

    def closeEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.layouts.close()
        super().closeEvent(event)


def _aoti_text(archive: Archive) -> str:
    aoti = archive.aoti
    if aoti is None:
        return "This archive holds no program."
    lines = [f"{Path(archive.path).name} is an AOTInductor package: compiled code and metadata, no program graph "
             "to show.", "", f"Models: {', '.join(aoti.models) or '?'}",
             f"Compiled for: {', '.join(aoti.devices) or 'unknown device'}", "", "Files:"]
    lines += [f"  {f}" for f in aoti.files]
    for name, meta in aoti.metadata.items():
        lines += ["", f"{name}:"] + [f"  {k}: {v}" for k, v in meta.items()]
    return "\n".join(lines)



