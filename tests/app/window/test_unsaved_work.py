"""Issue 43 §1 and §5: what the user made is not lost on closing, the title names the tab shown, and a file already
open is shown in its tab when opened again.

A program decomposed in the window lives in the decompose job's temporary folder, which goes with its tab: closing
that tab asks first (Cancel keeps it, Save asks where and closes only once saved, Discard closes). The window's
title follows the tab shown. Through the real worker, offscreen; questions and file dialogs are answered by the test
as a user would (QMessageBox.question and QFileDialog.getSaveFileName, as the other window tests answer them)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.pt2.reader import read_archive
from tests.app.compare.test_compare_view import decompose_to_core
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
TIMEOUT = 60_000
Button = QMessageBox.StandardButton


@pytest.fixture
def asking_window(qtbot):  # type: ignore[no-untyped-def]
    """A window that asks its questions (they are answered by the test's patches, never shown). Closed without
    questions after the test, whatever it left open."""
    w = MainWindow(interactive=True)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    w.interactive = False


@pytest.mark.worker
def test_closing_an_unsaved_decomposition_asks_first(qtbot, asking_window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                     monkeypatch, pt2_path: Callable[[str], Path]) -> None:
    window = asking_window
    view = decompose_to_core(qtbot, window, pt2_path("batchnorm_train"))
    assert view.decomposed_path is not None
    made = Path(view.decomposed_path)
    tabs = window.tabs.count()
    asked: list[str] = []
    answers: list[Button] = []

    def question(_parent, title, text, *_args):  # type: ignore[no-untyped-def]
        asked.append(f"{title}: {text}")
        return answers.pop(0)

    targets: list[str] = []

    def save_as(_parent, _title, suggested, _filter):  # type: ignore[no-untyped-def]
        return (targets.pop(0), "") if targets else ("", "")

    monkeypatch.setattr(QMessageBox, "question", question)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    index = window.tabs.indexOf(view)

    answers.append(Button.Cancel)  # Cancel: nothing closes
    window.close_tab(index)
    assert window.tabs.count() == tabs and made.is_file()
    assert len(asked) == 1 and made.name in asked[0] and "Closing this tab loses it" in asked[0]

    answers.append(Button.Save)  # Save, then the file dialog cancelled: still open, still unsaved
    window.close_tab(index)
    assert window.tabs.count() == tabs and view.unsaved() is not None

    target = tmp_path / "bn.core.pt2"
    answers.append(Button.Save)
    targets.append(str(target))
    window.close_tab(index)  # Save, and saved: the tab closes, the file is where the user chose
    assert window.tabs.count() == tabs - 1
    assert [n.name for n in read_archive(target).program().graph.nodes] == \
        [n.name for n in view.session.right.graph.nodes]
    assert len(asked) == 3 and not made.parent.exists()  # the job's folder went with its tab
    window.close_tab(window.tabs.currentIndex())  # the source's tab: nothing made, nothing asked
    assert len(asked) == 3 and window.tabs.count() == tabs - 2


def test_the_title_names_the_tab_shown_and_a_file_opens_once(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                               pt2_path: Callable[[str], Path]) -> None:
    """The title said "fail_unbacked.py" while another tab's program was shown; a file opened again made a second
    tab of it."""
    other = pt2_path("batchnorm_train")
    for path in (EXAMPLE, other):
        with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
            window.open_path(str(path))
    assert window.windowTitle() == f"{other.name} — PT2 Viewer"
    window.tabs.setCurrentIndex(0)
    assert window.windowTitle() == "example.pt2 — PT2 Viewer"
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as again:  # opened again: its tab, not a second
        window.open_path(str(other))
    assert window.tabs.count() == 2 and again.args[0] is window.tabs.widget(1) is window.tabs.currentWidget()
    assert window.windowTitle() == f"{other.name} — PT2 Viewer"
    window.close_tab(0)
    assert window.windowTitle() == f"{other.name} — PT2 Viewer"
    window.close_tab(0)
    assert window.windowTitle() == "PT2 Viewer"
