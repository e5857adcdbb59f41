"""The File menu's dialogs that write files: Export Graph (SVG or PNG, whole or the visible area), Export Report
(one self-contained HTML file, core/report/) and Save Program As (a .pt2, atomically; a .pte with its ETRecord
beside it, app/deploy/pte_saving.py). Each suggests a name from what the tab shows, never overwrites half a file,
and says what it wrote in the status bar."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QStatusBar, QTabWidget, QWidget

from pt2_viewer.app.deploy.pte_saving import ask_and_save_pte
from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.export_image import export_scene
from pt2_viewer.app.widgets.file_dialogs import save_file
from pt2_viewer.core.pte.magic import is_pte
from pt2_viewer.core.util.files import write_atomically


class Window(Protocol):
    """What these dialogs need of the main window."""

    tabs: QTabWidget
    interactive: bool

    def current_tab(self) -> DocumentTab | None: ...

    def view_document(self) -> DocumentWidget | None: ...

    def warn(self, title: str, message: str) -> None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 (Qt's name)


def suggested_name(source_file: str | None, suffix: str, fallback: str) -> str:
    """The file name a save dialog offers: the shown program's or script's own name with `suffix` (`gpt2.html`
    for gpt2.pt2), else `fallback`."""
    stem = Path(source_file).stem if source_file else ""
    return f"{stem}{suffix}" if stem else f"{fallback}{suffix}"


def export_report_dialog(window: Window, parent: QWidget) -> None:
    """File > Export Report…: the tab's program or script as one self-contained HTML file (core/report/)."""
    from pt2_viewer.app.export.report_export import ReportWriter, report_source  # deferred: Qt views, when used

    source = report_source(window.tabs.currentWidget())
    if source is None:
        window.warn("Export Report", "Open a .pt2, or run a script to its end, first: a report shows a program "
                    "or a script's export calls.")
        return
    tab = window.current_tab()
    shown = tab.source_file() if tab is not None else None
    path = save_file(parent, "Export report", shown, suggested_name(shown, ".html", "report"), "HTML (*.html)")
    if not path:
        return
    writer = ReportWriter(parent)
    writer.finished.connect(
        lambda message, ok: window.statusBar().showMessage(message) if ok else window.warn("Export Report", message))
    writer.write(source, path)
    window.statusBar().showMessage(f"Writing the report {path}…")


def export_graph_dialog(window: Window, parent: QWidget, visible_only: bool = False) -> None:
    """Save the whole graph, or only the part in view, as SVG or PNG."""
    doc = window.view_document()
    if doc is None:
        return
    what = "visible area" if visible_only else "graph"
    tab = window.current_tab()
    shown = tab.source_file() if tab is not None else None
    path = save_file(parent, f"Export {what}", shown, suggested_name(shown, ".svg", "graph"),
                     "SVG (*.svg);;PNG (*.png)")
    if not path:
        return
    view = doc.view
    region = view.mapToScene(view.viewport().rect()).boundingRect() if visible_only else None
    try:
        with view.plain():  # no selection or marks baked into the file
            size = export_scene(view.scene(), path, region)
    except OSError as e:
        window.warn("Export failed", f"Could not write '{path}': {e.strerror or e}")
        return
    note = size.note() if size is not None else ""
    if size is not None and note:
        window.statusBar().showMessage(f"Saved {path}: {size.width} x {size.height} px; {note}. For more detail, "
                                       "zoom in and use Export Visible Area, or save as SVG.")
    else:
        window.statusBar().showMessage(f"Saved {path}")


def save_program_dialog(window: Window, parent: QWidget) -> None:
    """Save the program shown (an archive's, or the selected export of a script) as a .pt2, atomically; a .pte (one
    the Lower dialog made, or one opened) with its ETRecord beside it when it has one. The tab hears of the save
    (`program_saved`), so a lowered tab no longer asks before closing."""
    tab = window.current_tab()
    source = tab.program_file() if tab is not None and tab.can_save_program() else None
    if tab is None or not source:
        window.warn("Nothing to save", "Select a successful export of a script, or open a program, first.")
        return
    if is_pte(source):
        written, message = ask_and_save_pte(parent, source, None, _folder_of(tab), window.interactive)
        if written:
            tab.program_saved(str(written[0]))
            window.statusBar().showMessage(message)
        elif message:
            window.warn("Save failed", message)
        return
    kinds = "ONNX models (*.onnx)" if Path(source).suffix == ".onnx" else "PyTorch archive (*.pt2)"
    target = save_file(parent, "Save program", tab.source_file() or source, Path(source).name, kinds)
    if not target:
        return
    try:
        write_atomically(target, lambda tmp: shutil.copyfile(source, tmp))
    except OSError as e:
        window.warn("Save failed", f"Could not write '{target}': {e.strerror or e}")
    else:
        tab.program_saved(target)
        window.statusBar().showMessage(f"Saved {target}")


def _folder_of(tab: DocumentTab) -> Path:
    """Where a save dialog opens: the folder of the program the tab shows (a lowered tab: its source's)."""
    shown = tab.source_file()
    return Path(shown).parent if shown else Path.home()


def save_decomposed_dialog(window: Window) -> None:
    """Program > Save Decomposed As…: the current tab's decomposed program, if it holds one."""
    tab = window.current_tab()
    if tab is not None and tab.can_save_decomposed():
        tab.save_decomposed_dialog()
    else:
        window.warn("Nothing to save", "Decompose a program first (Program > Decompose…), then save the "
                    "decomposed program from its comparison tab.")
