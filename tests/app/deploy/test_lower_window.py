"""Program > Lower to ExecuTorch… in the window: the worker lowers the program, the source is painted delegated / not
delegated (the reason in Details and the tooltip), the table "not delegated: op, reason, count" reveals its nodes,
the `.pte` opens beside its source linked through the ETRecord's debug handles, and the per-op error and time
overlays are painted on both graphs. Offscreen; screenshots go to PT2V_SCREENSHOTS when it is set."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.deploy.lower_dialog import LowerDialog
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.compare.session import LEFT, RIGHT
from pt2_viewer.core.deploy.delegation import OVERLAY
from pt2_viewer.core.graph.ids import node_of
from pt2_viewer.core.model.program import NodeOp
from tests.programs import ExportFailed

TIMEOUT = 600_000


def _shot(widget, name: str) -> None:  # type: ignore[no-untyped-def]
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        widget.grab().save(str(Path(folder) / name))


@pytest.fixture(scope="module")
def source() -> Path:
    pytest.importorskip("executorch", reason="executorch lowers the program (requirements-dev.txt)")
    from tests.deploy_programs import source_path

    try:
        return source_path(os.environ.get("PT2V_LOWER_MODEL", "small"))
    except ExportFailed as e:
        pytest.skip(str(e))


@pytest.mark.worker
def test_lowering_paints_the_source_and_opens_the_pte_beside_it(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                source: Path, tmp_path: Path, monkeypatch) -> None:
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(source))
    doc = blocker.args[0]
    tabs = window.tabs.count()
    dialog = window.lower_dialog()
    assert isinstance(dialog, LowerDialog)
    dialog.set_backend("xnnpack")
    dialog.start()
    qtbot.waitUntil(lambda: window.tabs.count() == tabs + 1, timeout=TIMEOUT)
    view = window.tabs.widget(window.tabs.currentIndex())
    assert isinstance(view, CompareView)
    result = dialog.lowered_result
    assert result is not None and result.backend == "xnnpack"
    calls = {n.name for n in doc.model.program.graph.nodes if n.op == NodeOp.CALL_FUNCTION}
    for painted in (doc, view.docs[LEFT]):  # the source tab and the comparison's source side
        overlay = painted.tools.extra[OVERLAY]
        assert calls <= set(overlay.categories)
        for row in result.not_delegated or []:
            assert row.reason in overlay.texts[row.node]
            assert ("Reason", row.reason) in overlay.rows[row.node]
    # the two sides are linked through the ETRecord's debug handles: a delegated node's counterpart is a delegate call
    for node in result.delegated or []:
        assert any(n.startswith("delegate_") for n in view.session.counterparts(LEFT, node)), node
    # the table: a row per (op, reason), its click selecting one of its nodes in the source
    if dialog.table.topLevelItemCount():
        item = dialog.table.topLevelItem(0)
        qtbot.mouseClick(dialog.table.viewport(), Qt.MouseButton.LeftButton,
                         pos=dialog.table.visualItemRect(item).center())
        assert node_of(doc.model.selection) in item.data(0, Qt.ItemDataRole.UserRole)
    qtbot.waitUntil(lambda: view.docs[RIGHT].ready and view.docs[LEFT].ready, timeout=TIMEOUT)
    _shot(window, "lowered_compare.png")
    _shot(dialog, "lower_dialog.png")

    # per-op error and time, on both graphs
    qtbot.mouseClick(dialog.numbers_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Numerics error" in view.docs[RIGHT].tools.extra, timeout=TIMEOUT)
    assert "Numerics error" in view.docs[LEFT].tools.extra
    qtbot.mouseClick(dialog.times_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Run time" in view.docs[RIGHT].tools.extra, timeout=TIMEOUT)
    times = view.docs[RIGHT].tools.extra["Run time"]
    assert times.values and set(times.values) <= {n.name for n in view.docs[RIGHT].model.program.graph.nodes}
    assert set(view.docs[LEFT].tools.extra["Run time"].values) <= calls
    _shot(window, "lowered_times.png")

    # Save .pte As… in the dialog: the .pte and its ETRecord beside it; the lowered tab then has nothing unsaved
    from PySide6.QtWidgets import QFileDialog

    assert view.unsaved() is not None
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a: (str(tmp_path / "kept.pte"), ""))
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert (tmp_path / "kept.pte").read_bytes() == Path(result.pte).read_bytes()
    assert (tmp_path / "kept.etrecord").read_bytes() == Path(result.etrecord).read_bytes()
    assert view.unsaved() is None and dialog.stage.text().startswith(f"Saved {tmp_path / 'kept.pte'} and its ETRecord")



@dataclass
class SavedInWindow:
    """What a user did in the window: lowered the source, quit, was asked, saved where the file dialog said."""

    made: Path  # the .pte the Lower dialog wrote in its temporary folder
    made_etrecord: Path
    saved: Path  # where the user saved it
    asked: list[str]  # the questions on quitting
    offered: list[str]  # the names the save dialog offered
    unsaved_before: str | None  # what the lowered tab said it would lose
    save_enabled: bool  # File > Save Program As… on the lowered tab
    closed: list[bool]  # whether the window closed, after each Quit


@pytest.fixture(scope="module")
def saved_in_window(qapp, request, source: Path, tmp_path_factory) -> SavedInWindow:  # type: ignore[no-untyped-def]
    """Issue 43 §1, as a user would: Lower to ExecuTorch… (portable), Quit (asked: Cancel), Quit again (asked:
    Save; the file dialog answered "saved", with no suffix). Shared by the checks on the window and the commands."""
    from PySide6.QtWidgets import QFileDialog, QMessageBox
    from pytestqt.qtbot import QtBot

    from pt2_viewer.app.window.lowered_tab import LoweredView

    qtbot = QtBot(request)
    folder = tmp_path_factory.mktemp("saved")
    window = MainWindow(interactive=True)  # it asks; the patches below answer (QMessageBox.question, the file dialog)
    window.resize(1400, 900)
    window.show()
    asked: list[str] = []
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save]
    offered: list[str] = []
    dialog: LowerDialog | None = None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(QMessageBox, "question", lambda _p, _title, text, *_a: (asked.append(text), answers.pop(0))[1])
        patch.setattr(QFileDialog, "getSaveFileName",
                      lambda _p, _t, suggested, _f: (offered.append(suggested), (str(folder / "saved"), ""))[1])
        try:
            with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
                window.open_path(str(source))
            shown = window.lower_dialog()
            assert isinstance(shown, LowerDialog) and not shown.save_button.isEnabled()
            dialog = shown
            dialog.set_backend("portable")
            dialog.start()
            qtbot.waitUntil(lambda: isinstance(window.current_tab(), LoweredView), timeout=TIMEOUT)
            view = window.current_tab()
            assert isinstance(view, LoweredView) and dialog.save_button.isEnabled()
            result = dialog.lowered_result
            assert result is not None and result.pte and result.etrecord
            made = Path(result.pte)
            enabled = window.save_action.isEnabled() and view.program_file() == str(made)
            unsaved = view.unsaved()
            closed = []
            for _quit in range(2):
                window.close()
                closed.append(not window.isVisible())
        finally:
            window.interactive = False  # whatever happened, closing asks nothing more
            window.close()
            if dialog is not None:
                dialog.close()
    return SavedInWindow(made, Path(result.etrecord), folder / "saved.pte", asked, offered, unsaved, enabled, closed)


@pytest.mark.worker
def test_a_pte_lowered_in_the_window_is_saved_with_its_etrecord_when_quitting(saved_in_window: SavedInWindow,
                                                                               source: Path) -> None:
    """The lowered `.pte` lived only in the app's temporary folder, Save Program As… was disabled on its tab, and
    quitting deleted it without a word."""
    done = saved_in_window
    made, saved = done.made, done.saved
    assert done.save_enabled and done.unsaved_before == f"the lowered program {made.name} and its ETRecord"
    assert done.closed == [False, True]  # Cancel kept the window open; Save saved, then it closed
    assert len(done.asked) == 2 and made.name in done.asked[0] and "Quitting loses them" in done.asked[1]
    assert done.offered == [str(source.parent / made.name)]  # offered beside the source, under the lowered name
    assert saved.read_bytes() == made.read_bytes()
    assert (saved.parent / "saved.etrecord").read_bytes() == done.made_etrecord.read_bytes()
    assert sorted(p.name for p in saved.parent.iterdir()) == ["saved.etrecord", "saved.pte"]  # no temporary file


def command(folder: Path, *argv: str) -> dict:  # type: ignore[type-arg]
    """A command line in a new process, its --json result."""
    done = subprocess.run([sys.executable, "-m", "pt2_viewer", *argv, "--json"], capture_output=True, text=True,
                          timeout=TIMEOUT / 1000, cwd=folder, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert isinstance(result, dict)
    return result


@pytest.mark.worker
def test_the_saved_etrecord_is_the_pte_s_own(saved_in_window: SavedInWindow, source: Path) -> None:
    """The ETRecord saved beside the `.pte` maps its instructions to the source's nodes (named, as before)."""
    saved = saved_in_window.saved
    run = command(saved.parent, "run", str(saved), "--node-times", "--source", str(source), "--etrecord",
                  str(saved.with_suffix(".etrecord")))
    assert run["source_node_times"]


@pytest.mark.worker
def test_numerics_and_run_find_the_etrecord_saved_beside_the_pte(saved_in_window: SavedInWindow,
                                                                  source: Path) -> None:
    """In a new process, with no --etrecord: the ETRecord saved beside the `.pte` maps it, not a fresh lowering."""
    saved = saved_in_window.saved
    beside = str(saved.with_suffix(".etrecord"))
    numerics = command(saved.parent, "numerics", str(source), "--candidate", str(saved))
    assert (numerics["etrecord_how"], numerics["etrecord_used"]) == ("beside", beside)
    run = command(saved.parent, "run", str(saved), "--node-times", "--source", str(source))
    assert (run["etrecord_how"], run["etrecord_used"]) == ("beside", beside) and run["source_node_times"]
