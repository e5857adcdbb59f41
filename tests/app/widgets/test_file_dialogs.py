"""File dialogs open in the folder of the program shown, not in the working folder (issue 43 §5): the helper's start
folder, and through the real window View > Overlay > Load Per-Node Values asked for a program kept away from the
working folder (Numerics' Browse…: tests/app/numerics/test_numerics_panel.py). The file dialog itself is answered by
the test (no dialog is shown)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMenu

from pt2_viewer.app.document.overlay_menu import fill_overlay_menu
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.widgets.file_dialogs import save_file, start_folder
from tests.app.graph.test_graph_tools import EXAMPLE, open_and_wait


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every file dialog asked for: (title, where it opens); each is cancelled."""
    seen: list[tuple[str, str]] = []

    def dialog(_parent, title, folder, _kinds=""):  # type: ignore[no-untyped-def]
        seen.append((title, folder))
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", dialog)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    return seen


def test_the_start_folder_is_the_program_s(tmp_path: Path, asked: list[tuple[str, str]]) -> None:
    program = tmp_path / "model.pt2"
    program.write_bytes(b"x")
    assert start_folder(program) == str(tmp_path)
    assert start_folder(None) == "" and start_folder(tmp_path / "gone" / "model.pt2") == ""
    assert save_file(None, "Save", program, "model.core.pt2") is None
    assert asked[-1] == ("Save", str(tmp_path / "model.core.pt2"))


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example program in a folder that is not the working folder."""
    kept = tmp_path / "elsewhere"
    kept.mkdir()
    program = kept / "example.pt2"
    shutil.copyfile(EXAMPLE, program)
    monkeypatch.chdir(tmp_path)  # the working folder is another
    return program


def test_the_window_s_dialogs_open_beside_the_program(qtbot, window: MainWindow, elsewhere: Path,  # type: ignore[no-untyped-def]
                                                      asked: list[tuple[str, str]]) -> None:
    kept = elsewhere.parent
    doc = open_and_wait(qtbot, window, elsewhere)
    menu = QMenu(window)
    fill_overlay_menu(menu, doc, window)
    next(a for a in menu.actions() if a.text().startswith("Load Per-Node Values")).trigger()
    assert asked[-1] == ("Load a per-node overlay", str(kept))
    assert os.getcwd() != str(kept)


def test_the_file_menu_s_save_dialogs_offer_the_program_s_folder(qtbot, window: MainWindow, elsewhere: Path,  # type: ignore[no-untyped-def]
                                                                 asked: list[tuple[str, str]]) -> None:
    from pt2_viewer.app.window.file_actions import export_graph_dialog, export_report_dialog, save_program_dialog

    kept = elsewhere.parent
    open_and_wait(qtbot, window, elsewhere)
    export_report_dialog(window, window)
    export_graph_dialog(window, window)
    save_program_dialog(window, window)
    assert asked == [("Export report", str(kept / "example.html")), ("Export graph", str(kept / "example.svg")),
                     ("Save program", str(kept / "example.pt2"))]
