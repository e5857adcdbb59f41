"""File > Export Report…: write the shareable HTML report (core/report/) of the tab shown, off the GUI thread.

The page's layouts run in the layout service's child process and the page is built in a thread, so the window stays
responsive; the result (the file and its size, or one line saying why not) comes back as a Qt signal.
"""
from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal


def report_source(tab: QObject | None) -> tuple[str, Path] | None:
    """What the tab's report is made from: ("archive", PATH.pt2) or ("script", its latest export folder)."""
    from pt2_viewer.app.export.script_document import ScriptDocument
    from pt2_viewer.app.graph.document import DocumentWidget

    if isinstance(tab, ScriptDocument):
        out = tab.session.out_dir
        return ("script", out) if out is not None and (out / "report.json").is_file() else None
    if isinstance(tab, DocumentWidget):
        return ("archive", Path(tab.model.archive.path))
    return None


class ReportWriter(QObject):
    """Writes one report in a thread; `finished(message, ok)` in the GUI thread when done."""

    finished = Signal(str, bool)

    def write(self, source: tuple[str, Path], out: str | Path) -> threading.Thread:
        thread = threading.Thread(target=self._run, args=(source, Path(out)), name="report-writer", daemon=True)
        thread.start()
        return thread

    def _run(self, source: tuple[str, Path], out: Path) -> None:
        from pt2_viewer.core.layout.records import LayoutError
        from pt2_viewer.core.pt2.errors import ArchiveError
        from pt2_viewer.core.report.write import write_archive_report, write_script_report

        kind, path = source
        try:
            size = write_script_report(path, out) if kind == "script" else write_archive_report(path, out)
        except (ArchiveError, LayoutError, OSError, ValueError) as e:
            self.finished.emit(f"Could not write the report {out.name}: {e}", False)
            return
        self.finished.emit(f"Saved the report {out} ({size / 1e6:.2f} MB): one file, opens in any browser", True)
