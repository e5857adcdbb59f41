"""Which command a source link runs (core/platform/editor.py): VS Code's `code -g FILE:LINE`, `$VISUAL`/`$EDITOR`
with `+LINE FILE`, and the built-in view when there is no editor, no file here, or the editor will not start."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.platform.editor import BUILTIN, ENVIRONMENT, VSCODE, detect, editor_command, open_in_editor


def test_commands_open_the_file_at_the_line() -> None:
    assert editor_command(VSCODE, "/src/model.py", 12, env={}) == ["code", "-g", "/src/model.py:12"]
    env = {"VISUAL": "emacsclient -n", "EDITOR": "vim"}
    assert editor_command(ENVIRONMENT, "/src/model.py", 12, env=env) == ["emacsclient", "-n", "+12", "/src/model.py"]
    assert editor_command(ENVIRONMENT, "/src/model.py", 3, env={"EDITOR": "vim"}) == ["vim", "+3", "/src/model.py"]
    assert editor_command(ENVIRONMENT, "/src/model.py", 3, env={}) is None
    assert editor_command(BUILTIN, "/src/model.py", 3, env=env) is None


def test_first_use_detects_vs_code_then_the_environment() -> None:
    assert detect({}, which=lambda name: "/usr/bin/code" if name == "code" else None) == VSCODE
    assert detect({"VISUAL": "gvim -f"}, which=lambda name: None) == ENVIRONMENT
    assert detect({"EDITOR": "nano"}, which=lambda name: None) == BUILTIN  # a terminal editor: only when chosen
    assert detect({}, which=lambda name: None) == BUILTIN


def test_the_built_in_view_is_the_fallback(tmp_path: Path) -> None:
    source = tmp_path / "model.py"
    source.write_text("x = 1\n")
    ran: list[list[str]] = []
    assert open_in_editor(VSCODE, str(source), 1, launch=ran.append)
    assert ran == [["code", "-g", f"{source}:1"]]
    assert not open_in_editor(VSCODE, str(tmp_path / "elsewhere.py"), 1, launch=ran.append)  # not on this machine
    assert not open_in_editor(BUILTIN, str(source), 1, launch=ran.append)

    def missing(command: list[str]) -> None:
        raise FileNotFoundError(command[0])

    assert not open_in_editor(VSCODE, str(source), 1, launch=missing)
    assert len(ran) == 1
