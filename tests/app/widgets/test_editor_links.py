"""A source link opens the editor chosen in Preferences at the line, recorded here by a real program standing in
for the editor (`$VISUAL`); the built-in view stays the fallback; the first use detects the editor."""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget

from pt2_viewer.app.jobs.preferences_dialog import PreferencesDialog
from pt2_viewer.app.settings import app_settings
from pt2_viewer.app.widgets.editor_choice import EDITOR_KEY, chosen_editor
from pt2_viewer.app.widgets.source_view import SourceView, open_source
from pt2_viewer.core.platform.editor import BUILTIN, ENVIRONMENT, VSCODE


def _recorder(folder: Path, name: str) -> tuple[Path, Path]:
    """An executable that writes the arguments it was started with into a file."""
    out = folder / f"{name}.args"
    exe = folder / name
    exe.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{out}.tmp" && mv "{out}.tmp" "{out}"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe, out


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "model.py"
    path.write_text("import torch\n" * 20)
    yield path
    app_settings().remove(EDITOR_KEY)  # the other tests' links find no choice saved


def test_a_link_runs_visual_at_the_line(qtbot, tmp_path: Path, source: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    exe, out = _recorder(tmp_path, "my-editor")
    monkeypatch.setenv("VISUAL", f"{exe} --wait")
    app_settings().setValue(EDITOR_KEY, ENVIRONMENT)
    parent = QWidget()
    qtbot.addWidget(parent)
    assert open_source(str(source), 12, parent) is None  # the editor took it: no built-in window
    qtbot.waitUntil(out.exists, timeout=10_000)
    assert out.read_text().splitlines() == ["--wait", "+12", str(source)]


def test_preferences_choose_the_built_in_view(qtbot, source: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("VISUAL", "/nonexistent/editor")
    store = app_settings()
    store.setValue(EDITOR_KEY, ENVIRONMENT)
    dialog = PreferencesDialog(store)
    qtbot.addWidget(dialog)
    combo = dialog.editor.choice
    assert combo.currentData() == ENVIRONMENT
    combo.setCurrentIndex(combo.findData(BUILTIN))
    dialog.accept()
    assert chosen_editor(store) == BUILTIN
    parent = QWidget()
    qtbot.addWidget(parent)
    view = open_source(str(source), 5, parent)
    assert isinstance(view, SourceView) and view.current_line() == 5
    # an editor that cannot start falls back to the built-in view too
    store.setValue(EDITOR_KEY, ENVIRONMENT)
    assert isinstance(open_source(str(source), 6, parent), SourceView)


def test_first_use_detects_vs_code_and_remembers_it(tmp_path: Path, source: Path, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _, out = _recorder(bin_dir, "code")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    store = app_settings()
    store.remove(EDITOR_KEY)
    assert chosen_editor(store) == VSCODE and store.value(EDITOR_KEY) == VSCODE
    assert open_source(str(source), 7, None) is None
    qtbot.waitUntil(out.exists, timeout=10_000)
    assert out.read_text().splitlines() == ["-g", f"{source}:7"]
