"""Where this install's files are (core/platform/install.py) is answered by core itself, from where it lies: core never
imports the root package `pt2_viewer` back (its `__init__.py` only makes core importable from a checkout, and its
`show()` uses core as any caller does). The wheel's answers: tests/test_wheel_install.py."""
from __future__ import annotations

import ast
from pathlib import Path

import pt2_viewer
from pt2_viewer.core.platform import install
from tests.programs import REPO_ROOT


def test_a_checkout_s_files_are_found_where_the_package_lies() -> None:
    assert install.package_folder() == Path(pt2_viewer.__file__).resolve().parent == REPO_ROOT / "pt2_viewer"
    assert install.package_parent() == REPO_ROOT and install.from_checkout()
    assert (install.resources() / "icons").is_dir()


def test_core_never_imports_the_root_package_back() -> None:
    back = []
    for path in sorted((REPO_ROOT / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Import) and any(a.name == "pt2_viewer" for a in node.names)
                    or isinstance(node, ast.ImportFrom) and node.module == "pt2_viewer" and not node.level):
                back.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert back == []
