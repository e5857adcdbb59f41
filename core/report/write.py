"""Write a report file for a `.pt2` or a model script's export folder (the entry points the CLI and the window use)."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.formats import registry
from pt2_viewer.core.report.page import ReportPage, render_page
from pt2_viewer.core.report.program_report import archives_page
from pt2_viewer.core.report.script_report import script_page
from pt2_viewer.core.util.files import write_atomically


def write_page(page: ReportPage, out: str | Path) -> int:
    """Write the page atomically; returns its size in bytes."""
    text = render_page(page)
    write_atomically(out, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return len(text.encode("utf-8"))


def write_archive_report(pt2: str | Path | list[str | Path], out: str | Path,
                         overlay: str | Path | None = None) -> int:
    """The report of a `.pt2` archive, or of several side by side (a program and its decomposition). Raises
    ArchiveError (bad file) or LayoutError (Graphviz failed)."""

    paths = pt2 if isinstance(pt2, list) else [pt2]
    return write_page(archives_page([registry.read(p) for p in paths], overlay=overlay), out)


def write_script_report(export_dir: str | Path, out: str | Path) -> int:
    """The report of a model script's export folder (report.json and the .pt2 files beside it)."""

    return write_page(script_page(export_dir), out)
