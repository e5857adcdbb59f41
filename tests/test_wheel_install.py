"""The wheel: `pip install .` puts one top-level package, `pt2_viewer`, into site-packages, with what the app needs
at run time inside it (icons, the bundled examples, the desktop files). Built from this checkout and installed into a
folder of its own; the installed copy, not the checkout, then reads the bundled example and finds its desktop files,
from a working folder outside the checkout."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.programs import REPO_ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(REPO_ROOT)], check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("pt2_viewer-*.whl")
    top = {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in top if not t.endswith(".dist-info")} == {"pt2_viewer"}, top
    target = out / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    return target


def run_installed(target: Path, code: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(target), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_wheel_has_one_package_with_the_apps_files(installed: Path, tmp_path: Path) -> None:
    out = run_installed(installed, (
        "import pt2_viewer\n"
        "from pt2_viewer.core.platform import desktop, install\n"
        "print(pt2_viewer.__file__)\n"
        "print(install.resources() / 'examples' / 'example.pt2')\n"
        "print(desktop.data_root() / 'packaging' / 'pt2-viewer.desktop')\n"
        "print(install.resources() / 'icons' / 'pt2-viewer.svg')\n"), tmp_path)
    package, example, desktop_file, icon = (Path(line) for line in out.split())
    assert package.is_relative_to(installed), "the installed copy, not the checkout"
    for f in (example, desktop_file, icon):
        assert f.is_file() and f.is_relative_to(installed), f


def test_the_installed_command_reads_the_bundled_example(installed: Path, tmp_path: Path) -> None:
    example = installed / "pt2_viewer" / "resources" / "examples" / "example.pt2"
    out = run_installed(installed, "import sys; from pt2_viewer.app.cli import main; "
                                   f"sys.exit(main(['info', {str(example)!r}]))", tmp_path)
    assert "1 program(s)" in out
