"""The report shown inline in a Jupyter notebook: what `pt2_viewer.show(ep)` returns in a kernel.

`Shown` is the saved `.pt2`'s path (a `Path`, as `show` returned before) that also displays itself: Jupyter calls
`_repr_html_` and gets the report page (core/report/) in an `<iframe srcdoc>`, so the page's own script, styles and
folding run as in a browser, boxed off from the notebook's page. `in_notebook()` says whether this Python is a
Jupyter kernel (an IPython shell with a kernel behind it), where `show` displays inline instead of opening a window.
"""
from __future__ import annotations

import html
import sys
from pathlib import Path
from typing import Any

PosixOrWindowsPath: Any = type(Path())  # Path itself cannot be subclassed before Python 3.12
FRAME_HEIGHT_PX = 640


class Shown(PosixOrWindowsPath):
    """The program's `.pt2` path; `report` is the HTML page beside it, shown inline by `_repr_html_`."""

    report: Path | None = None

    def _repr_html_(self) -> str:
        if self.report is None or not self.report.exists():
            return f"<code>{html.escape(str(self))}</code>"
        return inline_html(self.report.read_text(encoding="utf-8"), title=self.name)


def shown(path: Path, report: Path | None) -> Shown:
    out = Shown(path)
    out.report = report
    return out


def inline_html(page: str, title: str = "", height: int = FRAME_HEIGHT_PX) -> str:
    """A report page as a notebook cell's HTML output: the whole page in a sandboxed frame (scripts allowed, nothing
    else: the page fetches nothing)."""
    return (f"<iframe title='{html.escape(title)}' sandbox='allow-scripts' srcdoc=\"{html.escape(page, quote=True)}\" "
            f"style='width:100%;height:{height}px;border:1px solid #ccc'></iframe>")


def in_notebook() -> bool:
    """A Jupyter kernel runs this Python (IPython's shell with a kernel), not a terminal IPython or a script."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None) if ipython is not None else None
    shell = get() if callable(get) else None
    return shell is not None and getattr(shell, "kernel", None) is not None
