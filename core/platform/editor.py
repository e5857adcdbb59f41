"""Which editor a source link opens, and the command that opens a file at a line in it, without Qt.

A stack frame's link (Details, the export explanation, Diagnose) opens the user's own editor at the line when they
chose one in Preferences: VS Code (`code -g FILE:LINE`) or `$VISUAL`/`$EDITOR` with the usual `+LINE FILE` form.
With no choice saved yet, `detect` picks one on first use (VS Code when `code` is on PATH, else `$VISUAL` when set;
`$EDITOR` alone is most often a terminal editor, which a window cannot show, so it is only used when chosen) and the
window remembers it; `BUILTIN` is the viewer's own read-only view, and the fallback whenever an
editor cannot start or the file is not on this machine.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

BUILTIN, VSCODE, ENVIRONMENT = "builtin", "vscode", "environment"
CHOICES = {BUILTIN: "the viewer's own source view", VSCODE: "VS Code (code -g FILE:LINE)",
           ENVIRONMENT: "$VISUAL or $EDITOR (+LINE FILE)"}

Launcher = Callable[[list[str]], object]


def detect(env: Mapping[str, str] | None = None, which: Callable[[str], str | None] = shutil.which) -> str:
    env = os.environ if env is None else env
    if which("code"):
        return VSCODE
    if env.get("VISUAL"):
        return ENVIRONMENT
    return BUILTIN


def editor_command(choice: str, file: str, line: int, env: Mapping[str, str] | None = None) -> list[str] | None:
    """The command opening `file` at `line`; None for the built-in view (or no editor in the environment)."""
    env = os.environ if env is None else env
    if choice == VSCODE:
        return ["code", "-g", f"{file}:{max(1, line)}"]
    if choice == ENVIRONMENT:
        editor = env.get("VISUAL") or env.get("EDITOR")
        return [*shlex.split(editor), f"+{max(1, line)}", file] if editor else None
    return None


def _launch(command: list[str]) -> object:
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def open_in_editor(choice: str, file: str, line: int, launch: Launcher = _launch,
                   env: Mapping[str, str] | None = None) -> bool:
    """Open `file` at `line` in the chosen editor; False when the built-in view should show it instead (the built-in
    choice, a file not on this machine, an editor that will not start)."""
    command = editor_command(choice, file, line, env)
    if command is None or not Path(file).is_file():
        return False
    try:
        launch(command)
    except OSError:
        return False
    return True
