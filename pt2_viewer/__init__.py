"""PT2 Viewer: look inside PyTorch `torch.export` programs.

The installed distribution has this one top-level package: `pt2_viewer.core` (all logic, no Qt) and `pt2_viewer.app`
(the Qt views). In a wheel they are folders inside this package; in the source checkout they are the repository's own
`core/` and `app/` folders beside this one, which the line below adds to the package's search path, so the same
`pt2_viewer.core...` imports work from a checkout (with or without an editable install) and from a wheel.
"""
from __future__ import annotations

from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent
if not (Path(__file__).resolve().parent / "core").is_dir() and (_CHECKOUT / "core" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))  # a source checkout: core/ and app/ beside us

__version__ = "0.1.0"


def show(ep: object, name: str = "program", *, against: object = None, wait: bool = False,
         screenshot: str | None = None, notebook: bool | None = None) -> Path:
    """Show an ExportedProgram in the viewer, from a REPL or a notebook: `pt2_viewer.show(ep)`.

    The program is saved with `torch.export.save` to a temporary `.pt2` (kept while this Python runs, swept once it
    has ended). In a Jupyter kernel (or with `notebook=True`) the report page (docs/report.md) is written beside it and
    the returned path displays that page in the cell's output; `against=ep_b` makes it the diff of the two
    (docs/diff.md). Elsewhere the file is handed to the window already running, or a new window opens on it (both
    files with `against`). Returns the file's path either way. `wait=True` blocks until that window closes.
    `screenshot="graph.png"` instead saves a picture of the graph and returns once it is written. torch is imported
    only here, never by the window.
    """
    import subprocess
    import sys

    # Imported here, not at the top: every import of pt2_viewer.core runs this file first, and a window or a worker
    # that never calls show() does not pay for these.
    from pt2_viewer.core.platform import temp_dirs
    from pt2_viewer.core.report import inline
    from pt2_viewer.core.util.files import save_program

    for program in (ep, against):
        if program is not None and not (hasattr(program, "graph_module") and hasattr(program, "graph_signature")):
            raise TypeError(f"pt2_viewer.show() takes a torch.export.ExportedProgram, not {type(program).__name__}")
    folder = temp_dirs.new_dir("show")
    path = save_program(ep, folder / f"{name}.pt2")
    other = save_program(against, folder / f"{name}.against.pt2") if against is not None else None
    if screenshot is None and (inline.in_notebook() if notebook is None else notebook):
        from pt2_viewer.core.report.write import write_archive_report  # the report's pages: only for a notebook

        report = folder / f"{name}.html"
        write_archive_report([path, other] if other is not None else path, report)
        return inline.shown(path, report)
    command = [sys.executable, "-m", "pt2_viewer", str(path), *([str(other)] if other is not None else [])]
    if screenshot is not None:
        command += ["--screenshot", str(screenshot)]
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    if wait or screenshot is not None:
        if proc.wait() != 0 and screenshot is not None:
            raise RuntimeError(f"pt2-viewer could not draw {path} (see the message above)")
    return path
