"""PyInstaller hook: in the checkout, `pt2_viewer.core` and `pt2_viewer.app` are the repository's core/ and app/.

pt2_viewer/__init__.py appends the repository root to the package's `__path__` when it runs; PyInstaller's analysis
reads imports without running them, so it is told here (packaging/pt2-viewer.spec names this folder in `hookspath`).
"""
from pathlib import Path

from PyInstaller.depend.imphookapi import PreSafeImportModuleAPI

CHECKOUT = Path(__file__).resolve().parents[3]


def pre_safe_import_module(api: PreSafeImportModuleAPI) -> None:
    if (CHECKOUT / "core" / "__init__.py").is_file():  # as pt2_viewer/__init__.py decides
        api.append_package_path(str(CHECKOUT))
