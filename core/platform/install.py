"""Where this install's files are: the same questions answered for a source checkout, a wheel and the bundle.

A checkout has `pt2_viewer/`, `core/`, `app/`, `resources/` and `packaging/` side by side at the repository root; a
wheel has them all inside `site-packages/pt2_viewer/`; the PyInstaller bundle unpacks its data next to the program.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pt2_viewer


def package_parent() -> Path:
    """The folder that holds the `pt2_viewer` package: what a child process needs on PYTHONPATH to import it."""
    return Path(pt2_viewer.__file__).resolve().parent.parent


def from_checkout() -> bool:
    """True when running from a source checkout (pyproject.toml beside the package), not from an installed wheel."""
    return (package_parent() / "pyproject.toml").is_file()


def data_root() -> Path:
    """The folder that holds `resources/` and `packaging/`: the checkout, the installed package, or the bundle."""
    if getattr(sys, "frozen", False):
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
    return package_parent() if from_checkout() else Path(pt2_viewer.__file__).resolve().parent


def resources() -> Path:
    """`resources/`: icons and the bundled examples."""
    return data_root() / "resources"
