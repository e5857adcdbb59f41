"""Desktop integration for the current user: menu entry, the file types the viewer opens, icons, default application.

`pt2-viewer --install-desktop` copies the menu entry from `packaging/` and the icons from `resources/icons/` into
`$XDG_DATA_HOME` (default ~/.local/share), points the entry's `Exec` line at the command that starts *this* install,
writes the MIME package of the file types it is given (the format registry's, core/formats/registry.py: the caller
passes them, as this layer is below the readers) and lists them in the entry's `MimeType` line, refreshes the MIME
and desktop databases when their tools exist, and asks `xdg-mime` to make PT2 Viewer the default for each type.
`--uninstall-desktop` removes exactly those files and the default associations. No Qt here: the command runs without
a display. See docs/packaging.md.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pt2_viewer.core.platform import install
from pt2_viewer.core.platform.file_types import DesktopFileType, mime_package_xml
from pt2_viewer.core.util.files import write_atomically

APP_ID = "pt2-viewer"
DESKTOP_ID = f"{APP_ID}.desktop"
FileTypes = tuple[DesktopFileType, ...]
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
TOOL_TIMEOUT_S = 60

# Characters that force an Exec argument into double quotes (Desktop Entry Specification, "The Exec key").
_EXEC_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")
_EXEC_ESCAPED_IN_QUOTES = set('"`$\\')


class DesktopError(Exception):
    """Installing or removing the desktop files failed; the message says what to do."""


@dataclass(frozen=True)
class XdgDirs:
    """Where the per-user files go: `$XDG_DATA_HOME` and `$XDG_CONFIG_HOME` (mimeapps.list)."""

    data_home: Path
    config_home: Path

    @classmethod
    def from_environment(cls) -> XdgDirs:
        home = Path.home()
        data = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
        config = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        return cls(Path(data), Path(config))

    @property
    def desktop_file(self) -> Path:
        return self.data_home / "applications" / DESKTOP_ID

    @property
    def mime_package(self) -> Path:
        return self.data_home / "mime" / "packages" / f"{APP_ID}.xml"

    @property
    def hicolor(self) -> Path:
        return self.data_home / "icons" / "hicolor"

    def icon_files(self) -> dict[str, Path]:
        """Source file name in resources/icons -> installed path in the hicolor theme."""
        files = {f"{APP_ID}.svg": self.hicolor / "scalable" / "apps" / f"{APP_ID}.svg"}
        for size in ICON_SIZES:
            files[f"{APP_ID}-{size}.png"] = self.hicolor / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        return files

    @property
    def mimeapps_list(self) -> Path:
        return self.config_home / "mimeapps.list"

    def environment(self) -> dict[str, str]:
        """os.environ with these directories, so the xdg tools write where we do, and the system's libraries."""
        env = dict(os.environ)
        if getattr(sys, "frozen", False):
            # The PyInstaller bootloader points LD_LIBRARY_PATH at the bundle's libraries; system tools want theirs.
            original = env.pop("LD_LIBRARY_PATH_ORIG", None)
            env.pop("LD_LIBRARY_PATH", None)
            if original:
                env["LD_LIBRARY_PATH"] = original
        env["XDG_DATA_HOME"] = str(self.data_home)
        env["XDG_CONFIG_HOME"] = str(self.config_home)
        return env


@dataclass
class ToolRun:
    """One database tool call. `returncode` is None when the tool is not installed."""

    command: list[str]
    returncode: int | None
    output: str = ""

    @property
    def failed(self) -> bool:
        return self.returncode not in (None, 0)


@dataclass
class DesktopReport:
    """What install_desktop() or uninstall_desktop() did, for the command line and the tests."""

    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    tools: list[ToolRun] = field(default_factory=list)
    exec_line: str = ""

    @property
    def ok(self) -> bool:
        return not any(run.failed for run in self.tools)


# ---------------------------------------------------------------- where this install's files and command are


data_root = install.data_root


def _source_file(relative: str) -> Path:
    path = data_root() / relative
    if not path.is_file():
        raise DesktopError(
            f"{path} is missing, so the desktop files cannot be installed from this copy of PT2 Viewer. "
            "Run --install-desktop from a source checkout (`python -m pt2_viewer --install-desktop`) or from the "
            "bundle."
        )
    return path


def _script_interpreter(script: Path) -> str | None:
    """The interpreter a pip-written entry-point script runs (`#!python` or pip's `/bin/sh` trampoline)."""
    try:
        with open(script, "rb") as f:
            head = f.read(1024).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    words = head[0][2:].split()
    if words and Path(words[0]).name in ("sh", "bash") and len(head) > 1:
        match = re.match(r"'''exec' (\"[^\"]+\"|\S+)", head[1])  # pip quotes a path that holds spaces
        return match.group(1).strip('"') if match else None
    return words[0] if words else None


def _belongs_to(script: Path, python: Path) -> bool:
    interpreter = _script_interpreter(script)
    return interpreter is not None and Path(interpreter).parent.resolve() == python.parent.resolve()


def launch_command(python: str | None = None) -> tuple[list[str], Path | None]:
    """The command (argv, without files) that starts this install, and the working folder it needs (or None).

    In order: the bundle's own executable; a `pt2-viewer` on PATH that runs this interpreter; the `pt2-viewer`
    entry point next to this interpreter (a virtual environment that is not on PATH); else `python -m pt2_viewer` run
    from the source checkout, which is why that form comes with a working folder.
    """
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).resolve())], None
    interpreter = Path(python or sys.executable).absolute()
    on_path = shutil.which(APP_ID)
    if on_path and _belongs_to(Path(on_path), interpreter):
        return [str(Path(on_path).absolute())], None
    sibling = interpreter.parent / APP_ID
    if sibling.is_file() and os.access(sibling, os.X_OK) and _belongs_to(sibling, interpreter):
        return [str(sibling)], None
    return [str(interpreter), "-m", "pt2_viewer"], data_root()


def quote_exec_argument(argument: str) -> str:
    """One Exec argument as the Desktop Entry Specification wants it written in the file."""
    if "\n" in argument:
        raise DesktopError(f"cannot write a path with a line break into a .desktop file: {argument!r}")
    argument = argument.replace("%", "%%")
    if any(c in _EXEC_RESERVED for c in argument):
        argument = '"' + "".join("\\" + c if c in _EXEC_ESCAPED_IN_QUOTES else c for c in argument) + '"'
    return argument.replace("\\", "\\\\")  # the value itself is a string whose backslashes are escaped


def desktop_entry_text(command: list[str], workdir: Path | None, types: FileTypes) -> str:
    """packaging/pt2-viewer.desktop with Exec, TryExec (and Path) set for `command`, and MimeType listing `types`."""
    template = _source_file(f"packaging/{DESKTOP_ID}").read_text(encoding="utf-8")
    exec_line = "Exec=" + " ".join(quote_exec_argument(a) for a in command) + " %F"
    lines: list[str] = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            lines.append(exec_line)
            if workdir is not None:
                lines.append("Path=" + str(workdir).replace("\\", "\\\\"))
        elif line.startswith("TryExec="):
            lines.append("TryExec=" + command[0].replace("\\", "\\\\"))
        elif line.startswith("MimeType="):
            lines.append("MimeType=" + "".join(f"{t.mime_type};" for t in types))
        elif not line.startswith("Path="):
            lines.append(line)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- file and tool helpers


def _run_tool(command: list[str], dirs: XdgDirs) -> ToolRun:
    if shutil.which(command[0]) is None:
        return ToolRun(command, None, f"{command[0]} not found")
    try:
        done = subprocess.run(
            command, env=dirs.environment(), capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ToolRun(command, -1, str(exc))
    return ToolRun(command, done.returncode, (done.stdout + done.stderr).strip())


def _refresh_databases(dirs: XdgDirs) -> list[ToolRun]:
    runs = []
    if dirs.mime_package.parent.is_dir():  # both tools fail on a folder that does not exist
        runs.append(_run_tool(["update-mime-database", str(dirs.data_home / "mime")], dirs))
    if dirs.desktop_file.parent.is_dir():
        runs.append(_run_tool(["update-desktop-database", str(dirs.desktop_file.parent)], dirs))
    # A stale icon cache hides new icons; without a cache the theme folders are read directly, so make none.
    if (dirs.hicolor / "icon-theme.cache").exists():
        runs.append(_run_tool(["gtk-update-icon-cache", "--force", "--ignore-theme-index", "--quiet",
                               str(dirs.hicolor)], dirs))
    return runs


def remove_default_association(mimeapps: Path, mime_types: list[str]) -> bool:
    """Drop pt2-viewer.desktop from every line of a mimeapps.list for one of `mime_types` (`application/x-pytorch-pt2=`
    ...); True if changed."""
    if not mimeapps.is_file():
        return False
    original = mimeapps.read_text(encoding="utf-8").splitlines()
    kept: list[str] = []
    for line in original:
        prefix = next((f"{t}=" for t in mime_types if line.startswith(f"{t}=")), "")
        if prefix:
            apps = [a for a in line[len(prefix):].split(";") if a and a != DESKTOP_ID]
            if not apps:
                continue
            line = prefix + ";".join(apps) + ";"
        kept.append(line)
    if kept == original:
        return False
    write_atomically(mimeapps, ("\n".join(kept) + "\n").encode("utf-8"))
    return True


# ---------------------------------------------------------------- the two actions


def install_desktop(types: FileTypes, dirs: XdgDirs | None = None, python: str | None = None) -> DesktopReport:
    """Install the menu entry, the MIME types of `types` and the icons for the current user, and make PT2 Viewer the
    default application of each type."""
    dirs = dirs or XdgDirs.from_environment()
    command, workdir = launch_command(python)
    entry = desktop_entry_text(command, workdir, types)
    report = DesktopReport(exec_line=next(line for line in entry.splitlines() if line.startswith("Exec=")))

    files = {dirs.desktop_file: entry.encode("utf-8"),
             dirs.mime_package: mime_package_xml(types, icon=APP_ID).encode("utf-8")}
    for name, target in dirs.icon_files().items():
        files[target] = _source_file(f"resources/icons/{name}").read_bytes()
    for target, data in files.items():
        write_atomically(target, data)
        report.written.append(target)

    report.tools += _refresh_databases(dirs)
    mime_types = [t.mime_type for t in types]
    _check_mime_registered(dirs, report.tools[0], mime_types)
    report.tools.append(_run_tool(["xdg-mime", "default", DESKTOP_ID, *mime_types], dirs))
    return report


def _check_mime_registered(dirs: XdgDirs, update_run: ToolRun, mime_types: list[str]) -> None:
    """update-mime-database exits 0 even when it cannot parse a package, so look at what it wrote."""
    if update_run.returncode != 0:
        return
    registered = dirs.data_home / "mime" / "types"
    missing = sorted(set(mime_types) - set(registered.read_text(encoding="utf-8").split()))
    if missing:
        update_run.returncode = 1
        update_run.output = f"{', '.join(missing)} missing from {registered}; {update_run.output}".strip("; ")


def uninstall_desktop(types: FileTypes, dirs: XdgDirs | None = None) -> DesktopReport:
    """Remove what install_desktop() wrote and the default associations of `types`; leaves shared folders in
    place."""
    dirs = dirs or XdgDirs.from_environment()
    report = DesktopReport()
    for path in [dirs.desktop_file, dirs.mime_package, *dirs.icon_files().values()]:
        if path.exists():
            path.unlink()
            report.removed.append(path)
    if remove_default_association(dirs.mimeapps_list, [t.mime_type for t in types]):
        report.written.append(dirs.mimeapps_list)
    report.tools += _refresh_databases(dirs)
    return report


def _print_report(report: DesktopReport, verb: str) -> None:
    for path in report.written:
        print(f"{verb} {path}")
    for path in report.removed:
        print(f"removed {path}")
    if report.exec_line:
        print(f"menu entry runs: {report.exec_line[len('Exec='):]}")
    for run in report.tools:
        if run.returncode is None:
            print(f"note: {run.output}; skipped `{' '.join(run.command)}` "
                  "(install xdg-utils, shared-mime-info and desktop-file-utils for the full integration)")
        elif run.failed:
            print(f"error: `{' '.join(run.command)}` exited with {run.returncode}: {run.output}", file=sys.stderr)


def cli_main(install: bool, types: FileTypes) -> int:
    """`pt2-viewer --install-desktop` (install=True) or `--uninstall-desktop` of the file types `types` (the format
    registry's `desktop_file_types()`): 0 on success, 1 on any failure."""
    action = install_desktop if install else uninstall_desktop
    try:
        report = action(types)
    except (DesktopError, OSError) as exc:
        what = "install" if install else "remove"
        print(f"pt2-viewer: could not {what} the desktop integration: {exc}", file=sys.stderr)
        return 1
    _print_report(report, "installed" if install else "updated")
    if report.ok:
        done = "installed; .pt2 files now open in PT2 Viewer" if install else "removed"
        print(f"desktop integration {done}")
    return 0 if report.ok else 1
