"""View > Overlay: the overlays the graph the View menu acts on offers (its tools, app/graph/tools.py), importing a
torch.profiler trace, of the eager module or of a compiled run with its TORCH_TRACE (app/document/profile_import.py),
importing an ETDump recorded where a `.pte` ran, on the `.pte` and the source beside it (app/document/etdump_import.py),
and loading a user's `{node_name: value}` JSON file. Built each time the menu opens."""
from __future__ import annotations

import functools

from PySide6.QtGui import QActionGroup
from PySide6.QtWidgets import QMenu, QWidget

from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.widgets.file_dialogs import open_file, open_folder
from pt2_viewer.core.graph.overlays import Overlay


def fill_overlay_menu(menu: QMenu, doc: DocumentWidget | None, parent: QWidget) -> None:
    """View > Overlay for the graph the View menu acts on: None, each overlay it offers, and loading a user's
    `{node_name: value}` JSON file."""
    menu.clear()
    if doc is None:
        menu.addAction("No graph").setEnabled(False)
        return
    tools = doc.tools
    group = QActionGroup(menu)
    for name in [None, *tools.overlay_names()]:
        action = menu.addAction(name or "None (kind colours)", functools.partial(tools.show_overlay, name))
        action.setCheckable(True)
        action.setChecked(tools.overlay_name == name)
        group.addAction(action)
    menu.addSeparator()

    def load() -> None:
        path = open_file(parent, "Load a per-node overlay", doc.model.archive.path, "JSON {node: value} (*.json)")
        if path:
            try:
                overlay = tools.load_overlay(path)
            except ValueError as e:
                doc.status.emit(str(e))
                return
            doc.status.emit(f"Overlay {overlay.name}: {len(overlay.texts)} nodes"
                            + (f" ({'; '.join(overlay.notes)})" if overlay.notes else ""))

    def import_profile(compiled: bool) -> None:
        # imported when first asked for: the profile's reader and the compile trace's are not the first view's
        from pt2_viewer.app.document.profile_import import (
            TORCH_TRACE_TITLE,
            ProfileLoader,
            import_dialog,
            reading_line,
            status_line,
        )

        path = open_file(parent, *import_dialog(doc.model.archive))
        torch_trace = open_folder(parent, TORCH_TRACE_TITLE, path) if path and compiled else None
        if not path or (compiled and not torch_trace):
            return
        loader = ProfileLoader(doc)

        def read(read_path: str, overlay: Overlay) -> None:
            loader.deleteLater()
            tools.add_overlay(overlay)
            doc.status.emit(status_line(read_path, overlay))

        def failed(message: str) -> None:
            loader.deleteLater()
            doc.status.emit(message)

        loader.read.connect(read)
        loader.failed.connect(failed)
        doc.status.emit(reading_line(path, torch_trace))
        loader.load(doc.model.archive, doc.model.program, path, torch_trace)

    menu.addAction("Import Profile…", functools.partial(import_profile, False))
    compiled = menu.addAction("Import Compiled Profile (with TORCH_TRACE)…", functools.partial(import_profile, True))
    compiled.setEnabled(doc.model.archive.archive_format != "onnx")  # an .onnx takes ONNX Runtime's profile alone
    sides = etdump_sides(doc)

    def import_etdump() -> None:
        from pt2_viewer.app.document.etdump_import import EtdumpImportDialog  # a job dialog: not the first view's

        assert sides is not None
        EtdumpImportDialog(*sides, parent=parent).show()

    etdump = menu.addAction("Import ETDump…", import_etdump)
    etdump.setEnabled(sides is not None)
    etdump.setToolTip("An ETDump recorded where an ExecuTorch .pte ran: its times on the .pte (and its source)")
    menu.setToolTipsVisible(True)
    menu.addAction("Load Per-Node Values (JSON)…", load)


def etdump_sides(doc: DocumentWidget) -> tuple[DocumentWidget, DocumentWidget | None] | None:
    """Where Import ETDump… paints: the `.pte` the graph is, or the one beside it in its tab (the lowered tab's),
    and the source program beside that `.pte` (a tab of two graphs); None where no `.pte` is shown."""
    tab = doc.parentWidget()
    while tab is not None and not isinstance(tab, DocumentTab):
        tab = tab.parentWidget()
    graphs = tab.graphs() if tab is not None else [doc]
    ptes = [g for g in graphs if g.model.archive.archive_format == "pte"]
    if not ptes:
        return None
    pte = doc if doc in ptes else ptes[0]
    others = [g for g in graphs if g is not pte]
    source = others[0] if len(graphs) == 2 and others[0].model.archive.archive_format not in ("pte", "onnx") else None
    return pte, source
