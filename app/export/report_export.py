"""File > Export Report…: write the shareable HTML report (core/report/) of the tab shown, off the GUI thread.

The page's layouts run in the layout service's child process and the page is built in a thread, so the window stays
responsive; the result (the file and its size, or one line saying why not) comes back as a Qt signal.
"""
from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from pt2_viewer.core.layout.records import LayoutError
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.report.write import write_archive_report, write_script_report
from pt2_viewer.core.util.words import format_bytes

Source = tuple[str, list[Path]]  # ("script", [its latest export folder]) or ("archive", [PATH.pt2, ...])


def report_source(tab: QObject | None) -> Source | None:
    """What the tab's report is made from: a script's last run, or the archives of the graphs the tab shows (one
    program, or both sides of a comparison, app/graph/tab.py's `graphs()`)."""
    from pt2_viewer.app.export.script_document import ScriptDocument  # deferred: Qt view (test_lazy_imports)

    if isinstance(tab, ScriptDocument):
        out = tab.session.out_dir
        return ("script", [out]) if out is not None and (out / "report.json").is_file() else None
    graphs = getattr(tab, "graphs", None)
    paths = list(dict.fromkeys(Path(g.model.archive.path) for g in graphs())) if callable(graphs) else []
    return ("archive", paths) if paths else None


class ReportWriter(QObject):
    """Writes one report in a thread; `finished(message, ok)` in the GUI thread when done."""

    finished = Signal(str, bool)

    def write(self, source: Source, out: str | Path) -> threading.Thread:
        thread = threading.Thread(target=self._run, args=(source, Path(out)), name="report-writer", daemon=True)
        thread.start()
        return thread

    def _run(self, source: Source, out: Path) -> None:
        kind, paths = source
        try:
            size = (write_script_report(paths[0], out) if kind == "script"
                    else write_archive_report(list(paths), out))
        except (ArchiveError, LayoutError, OSError, ValueError) as e:
            self.finished.emit(f"Could not write the report {out.name}: {e}", False)
            return
        self.finished.emit(f"Saved the report {out} ({format_bytes(size)}): one file, opens in any browser", True)
