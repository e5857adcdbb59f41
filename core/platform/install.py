"""Where this install's files are: the same questions answered for a source checkout, a wheel and the bundle.

A checkout has `pt2_viewer/`, `core/`, `app/`, `resources/` and `packaging/` side by side at the repository root; a
wheel has them all inside `site-packages/pt2_viewer/`; the PyInstaller bundle unpacks its data next to the program.
This module answers from where it lies itself (in core/platform/), so core never imports the root package back: the
root package (`pt2_viewer/__init__.py`) only makes `pt2_viewer.core` importable from a checkout, and its `show()`
uses core like any other caller.
"""
from __future__ import annotations

import sys
from pathlib import Path

_CORE = Path(__file__).resolve().parent.parent  # core/: the checkout's own folder, or pt2_viewer/core in a wheel


def package_folder() -> Path:
    """The `pt2_viewer` package's folder (its `__init__.py`): beside core/ in a checkout, core/'s parent in a wheel
    and in the bundle."""
    beside = _CORE.parent / "pt2_viewer"
    return beside if (beside / "__init__.py").is_file() else _CORE.parent


def package_parent() -> Path:
    """The folder that holds the `pt2_viewer` package: what a child process needs on PYTHONPATH to import it."""
    return package_folder().parent


def from_checkout() -> bool:
    """True when running from a source checkout (pyproject.toml beside the package), not from an installed wheel."""
    return (package_parent() / "pyproject.toml").is_file()


def data_root() -> Path:
    """The folder that holds `resources/` and `packaging/`: the checkout, the installed package, or the bundle."""
    if getattr(sys, "frozen", False):
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
    return package_parent() if from_checkout() else package_folder()


def resources() -> Path:
    """`resources/`: icons and the bundled examples."""
    return data_root() / "resources"
