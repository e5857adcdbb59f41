"""Test-wide set-up: Qt runs offscreen, and settings, caches and trust decisions go to a private temporary home so
tests never touch (or depend on) the user's own files."""
from __future__ import annotations

import os
import tempfile

import pytest

_home = tempfile.mkdtemp(prefix="pt2v-test-home-")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_home, "config")
os.environ["XDG_CACHE_HOME"] = os.path.join(_home, "cache")
os.environ["XDG_DATA_HOME"] = os.path.join(_home, "data")
os.environ["XDG_RUNTIME_DIR"] = os.path.join(_home, "runtime")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)

from tests.programs import pt2_path  # noqa: E402,F401  (the shared fixture of real exported programs)


@pytest.fixture
def window(qtbot):  # type: ignore[no-untyped-def]
    """A main window for Qt tests: non-interactive (no modal dialogs), shown offscreen, closed after the test."""
    from pt2_viewer.app.main_window import MainWindow

    w = MainWindow(interactive=False)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w
