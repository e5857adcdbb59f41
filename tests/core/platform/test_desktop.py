"""`pt2-viewer --install-desktop` / `--uninstall-desktop` (core/platform/desktop.py) against the real freedesktop tools.

Everything is installed into a temporary XDG_DATA_HOME / XDG_CONFIG_HOME, then checked the way a desktop would:
`desktop-file-validate` on the entry, and what GNOME, KDE and file managers ask, GLib's shared-mime-info lookup through
`gio` (Debian's libglib2.0-bin): `gio info -a standard::content-type` on a real archive saved by torch.export.save,
and `gio mime application/x-pytorch-pt2` for the default application. Not `xdg-mime query filetype`: with a generic
desktop and no libfile-mimeinfo-perl it falls back to `file(1)`, which answers application/zip for any .pt2.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pt2_viewer.core.formats.registry import ONNX_MIME_TYPE, PTE_MIME_TYPE, desktop_file_types
from pt2_viewer.core.formats.registry import PT2_MIME_TYPE as MIME_TYPE
from pt2_viewer.core.platform import desktop
from pt2_viewer.core.platform.desktop import APP_ID, DESKTOP_ID, XdgDirs
from pt2_viewer.core.platform.file_types import mime_package_xml
from tests.programs import pt2_path  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ("gio", "xdg-mime", "update-mime-database", "update-desktop-database", "desktop-file-validate")
needs_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS),
    reason="needs libglib2.0-bin, xdg-utils, shared-mime-info and desktop-file-utils (scripts/setup.sh installs them)",
)


@pytest.fixture
def xdg(tmp_path, monkeypatch) -> XdgDirs:
    """A private XDG home, and a generic desktop so that xdg-mime answers from the XDG files alone."""
    dirs = XdgDirs(tmp_path / "data", tmp_path / "config")
    monkeypatch.setenv("XDG_DATA_HOME", str(dirs.data_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(dirs.config_home))
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "X-Generic")  # no desktop-specific mimeapps.list of the host
    monkeypatch.setenv("GIO_USE_VFS", "local")  # plain files: no gvfs daemon, no D-Bus session needed
    monkeypatch.setenv("LC_ALL", "C.UTF-8")  # gio's messages untranslated
    return dirs


def run(*command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def filetype(path: Path) -> str:
    """The MIME type a desktop (GLib, shared-mime-info) gives the file."""
    done = run("gio", "info", "-a", "standard::content-type", str(path))
    found = re.search(r"standard::content-type: (\S+)", done.stdout)
    assert found, done.stdout + done.stderr
    return found.group(1)


def default_app(mime_type: str) -> str:
    """The desktop entry a desktop opens `mime_type` with; "" when none."""
    done = run("gio", "mime", mime_type)
    found = re.search(r"^Default application for .*: (\S+)$", done.stdout, re.MULTILINE)
    return found.group(1) if found else ""


@needs_tools
def test_install_registers_pt2_type_and_default_app_then_uninstall_removes_them(xdg, pt2_path, tmp_path):
    archive = tmp_path / "tiny model.pt2"
    shutil.copyfile(pt2_path("topk_cond"), archive)
    assert filetype(archive) == "application/zip"  # before: just a zip

    done = run(sys.executable, "-m", "pt2_viewer", "--install-desktop")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "desktop integration installed" in done.stdout

    lines = xdg.desktop_file.read_text(encoding="utf-8").splitlines()
    assert run("desktop-file-validate", str(xdg.desktop_file)).stdout == ""
    command, workdir = desktop.launch_command()  # `python -m pt2_viewer` from the checkout, or this venv's entry point
    assert f"Exec={' '.join(command)} %F" in lines
    assert (f"Path={workdir}" in lines) == (workdir is not None)
    assert f"MimeType={MIME_TYPE};{PTE_MIME_TYPE};{ONNX_MIME_TYPE};" in lines
    # The menu's command really starts this install, from where the menu would start it.
    started = run(*command, "--help", cwd=workdir or Path("/"))
    assert started.returncode == 0 and "--install-desktop" in started.stdout, started.stderr
    # the file types are the format registry's (core/formats/registry.py)
    assert xdg.mime_package.read_text(encoding="utf-8") == mime_package_xml(desktop_file_types(), icon=APP_ID)
    for name, installed in xdg.icon_files().items():
        assert installed.read_bytes() == (ROOT / "resources" / "icons" / name).read_bytes()

    assert filetype(archive) == MIME_TYPE
    assert default_app(MIME_TYPE) == DESKTOP_ID
    # an ExecuTorch program, by its extension and by its magic ('ET12' at byte 4) under another name
    pte_head = b"\x1c\x00\x00\x00ET12" + bytes(56)
    for name in ("model.pte", "model.bin"):
        (tmp_path / name).write_bytes(pte_head)
        assert filetype(tmp_path / name) == PTE_MIME_TYPE, name
    assert default_app(PTE_MIME_TYPE) == DESKTOP_ID
    (tmp_path / "model.onnx").write_bytes(b"\x08\x0a")  # an ONNX model, by its extension alone (it has no magic)
    assert filetype(tmp_path / "model.onnx") == ONNX_MIME_TYPE
    assert default_app(ONNX_MIME_TYPE) == DESKTOP_ID
    assert DESKTOP_ID in (xdg.data_home / "applications" / "mimeinfo.cache").read_text()

    done = run(sys.executable, "-m", "pt2_viewer", "--uninstall-desktop")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not xdg.desktop_file.exists() and not xdg.mime_package.exists()
    assert not any(path.exists() for path in xdg.icon_files().values())
    assert filetype(archive) == "application/zip"
    assert default_app(MIME_TYPE) == ""


@needs_tools
def test_uninstall_keeps_other_applications_associations(xdg):
    xdg.config_home.mkdir(parents=True)
    xdg.mimeapps_list.write_text(
        "[Default Applications]\ntext/plain=gedit.desktop\n\n"
        f"[Added Associations]\n{MIME_TYPE}=netron.desktop;{DESKTOP_ID};\n",
        encoding="utf-8",
    )
    assert desktop.install_desktop(desktop_file_types(), xdg).ok
    assert f"{MIME_TYPE}={DESKTOP_ID}" in xdg.mimeapps_list.read_text(encoding="utf-8").splitlines()

    report = desktop.uninstall_desktop(desktop_file_types(), xdg)
    assert report.ok and xdg.mimeapps_list in report.written
    lines = xdg.mimeapps_list.read_text(encoding="utf-8").splitlines()
    assert "text/plain=gedit.desktop" in lines
    assert f"{MIME_TYPE}=netron.desktop;" in lines
    assert not any(DESKTOP_ID in line for line in lines)


@needs_tools
def test_exec_line_survives_spaces_and_percent_signs(xdg, tmp_path):
    python = tmp_path / "my env 100%" / "bin" / "python"
    report = desktop.install_desktop(desktop_file_types(), xdg, python=str(python))
    assert report.exec_line == f'Exec="{python.as_posix().replace("%", "%%")}" -m pt2_viewer %F'
    done = run("desktop-file-validate", str(xdg.desktop_file))
    assert done.returncode == 0 and done.stdout == "", done.stdout


def test_quoting_follows_the_desktop_entry_spec():
    assert desktop.quote_exec_argument("/usr/bin/pt2-viewer") == "/usr/bin/pt2-viewer"
    assert desktop.quote_exec_argument("/a b/py") == '"/a b/py"'
    # Inside quotes ` $ " \ get a backslash; then every backslash is doubled because the value is a string.
    assert desktop.quote_exec_argument('/x$"y') == '"/x\\\\$\\\\"y"'
    assert desktop.quote_exec_argument("/50%") == "/50%%"
    with pytest.raises(desktop.DesktopError, match="line break"):
        desktop.quote_exec_argument("/a\nb")


def _entry_point(path: Path, interpreter: Path, trampoline: bool = False) -> Path:
    """A console script as pip writes it (pip uses a /bin/sh trampoline when the shebang would be too long)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if trampoline:
        head = f"#!/bin/sh\n'''exec' \"{interpreter}\" \"$0\" \"$@\"\n' '''\n"
    else:
        head = f"#!{interpreter}\n"
    path.write_text(head + "import sys\nfrom pt2_viewer.app.cli import main\nsys.exit(main())\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_launch_command_prefers_this_installs_entry_point_on_path(tmp_path, monkeypatch):
    python = tmp_path / "venv" / "bin" / "python"
    script = _entry_point(tmp_path / "venv" / "bin" / "pt2-viewer", python)
    monkeypatch.setenv("PATH", str(script.parent))
    assert desktop.launch_command(str(python)) == ([str(script)], None)


def test_launch_command_uses_entry_point_next_to_the_interpreter_when_not_on_path(tmp_path, monkeypatch):
    python = tmp_path / "my venv" / "bin" / "python"
    script = _entry_point(tmp_path / "my venv" / "bin" / "pt2-viewer", python, trampoline=True)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert desktop.launch_command(str(python)) == ([str(script)], None)


def test_launch_command_ignores_another_installs_entry_point(tmp_path, monkeypatch):
    other = _entry_point(tmp_path / "other" / "bin" / "pt2-viewer", tmp_path / "other" / "bin" / "python3")
    monkeypatch.setenv("PATH", str(other.parent))
    python = tmp_path / "venv" / "bin" / "python"
    assert desktop.launch_command(str(python)) == ([str(python), "-m", "pt2_viewer"], ROOT)


def test_missing_desktop_files_give_a_clear_error(xdg, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(desktop, "data_root", lambda: tmp_path / "not-a-checkout")
    assert desktop.cli_main(install=True, types=desktop_file_types()) == 1
    err = capsys.readouterr().err
    assert "pt2-viewer.desktop is missing" in err and "source checkout" in err
    assert not xdg.desktop_file.exists()


def test_uninstall_when_nothing_is_installed_is_harmless(xdg):
    report = desktop.uninstall_desktop(desktop_file_types(), xdg)
    assert report.ok and report.removed == [] and report.written == []


def test_packaged_desktop_entry_is_valid():
    if shutil.which("desktop-file-validate") is None:
        pytest.skip("desktop-file-validate is not installed (desktop-file-utils)")
    done = run("desktop-file-validate", str(ROOT / "packaging" / DESKTOP_ID))
    assert done.returncode == 0 and done.stdout == "", done.stdout


def test_icon_pngs_match_the_svg():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, str(ROOT / "packaging" / "render_icons.py"), "--check"],
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr


def test_tools_started_from_the_bundle_get_the_systems_library_path(monkeypatch, tmp_path):
    # The PyInstaller bootloader points LD_LIBRARY_PATH at the bundle; update-mime-database and friends must not
    # load the bundle's glib.
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/pt2-viewer/_internal")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/usr/local/lib")
    env = XdgDirs(tmp_path / "d", tmp_path / "c").environment()
    assert env["LD_LIBRARY_PATH"] == "/usr/local/lib" and "LD_LIBRARY_PATH_ORIG" not in env
    monkeypatch.delenv("LD_LIBRARY_PATH_ORIG")
    assert "LD_LIBRARY_PATH" not in XdgDirs(tmp_path / "d", tmp_path / "c").environment()
