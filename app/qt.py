"""Typed doors to the few PySide6 calls whose stubs say less than what they return, so the rest of the app is
type-checked without casts: `QApplication.instance()` is typed as an optional `QCoreApplication`, but in this app it
is always the one `QApplication` (app/main.py makes it before any window)."""
from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication


def application() -> QApplication:
    """The running QApplication, made here first if there is none yet (a test, a command that draws offscreen)."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    if app is not None:
        raise RuntimeError("a QCoreApplication without widgets is running; PT2 Viewer's windows need a QApplication")
    return QApplication(sys.argv[:1])


__all__ = ["application"]
