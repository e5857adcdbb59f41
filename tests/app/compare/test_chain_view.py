"""A program, its core ATen decomposition and its `.pte` as three synced panes (app/compare/chain.py), on the zoo's
CNN lowered to portable kernels with its ETRecord: each adjacent pair diffed and painted, and a node selected in the
first pane selects its counterparts in the second (torch's `from_node`) and the third (the ETRecord's debug handles).
Offscreen; every wait is on a signal or a condition."""
from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel
from pytestqt.qtbot import QtBot

from pt2_viewer.app.compare.chain import NEXT_OVERLAY, ChainView
from pt2_viewer.app.compare.pipeline_files import CORE_TITLE, PTE_TITLE, PipelineFiles, PipelineFilesDialog
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.qt import later
from pt2_viewer.core.diff.matcher import PROVENANCE
from pt2_viewer.core.diff.overlay import DIFF_OVERLAY
from tests.chain_programs import cnn_chain

TIMEOUT = 120_000


@pytest.fixture(scope="module")
def chained(qapp, request):  # type: ignore[no-untyped-def]
    chain = cnn_chain()
    qtbot = QtBot(request)
    window = MainWindow(interactive=False)
    window.resize(1400, 900)
    window.show()
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(chain.source))
    doc = blocker.args[0]
    window.comparisons.open_chain(doc, str(chain.core), str(chain.lowered.pte), str(chain.lowered.etrecord))
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ChainView), timeout=TIMEOUT)
    view = window.tabs.currentWidget()
    assert isinstance(view, ChainView)
    qtbot.waitUntil(lambda: all(d.ready for d in view.docs), timeout=TIMEOUT)
    yield window, view, chain
    window.close()
    window.deleteLater()


def test_three_panes_each_adjacent_pair_diffed_and_painted(chained) -> None:  # type: ignore[no-untyped-def]
    _, view, _ = chained
    assert len(view.docs) == 3 and len(view.diff_panels) == 2
    to_core, to_pte = (p.diff for p in view.diff_panels)
    # source -> core ATen: torch's from_node pairs every op; conv2d became convolution (an op change)
    assert to_core.matching.a_to_b["conv2d"] == "convolution"
    assert to_core.summary["changed"] > 0 and to_core.summary["removed"] <= 1
    # core ATen -> .pte: paired through the ETRecord's debug handles
    assert to_pte.matching.a_to_b["convolution"] == "convolution_0"
    assert sum(1 for how in to_pte.matching.method.values() if how == PROVENANCE) >= 100
    for panel in view.diff_panels:
        assert panel.tree.topLevelItemCount() > 0 and panel.summary.text()
    # the first pane painted by the first pair, the later ones by their diff against the stage before
    for doc, diff, side in ((view.docs[0], to_core, "a"), (view.docs[1], to_core, "b"), (view.docs[2], to_pte, "b")):
        assert doc.tools.overlay_name == DIFF_OVERLAY
        painted = set(doc.view.overlay.categories)
        assert painted == {getattr(c, side) for c in diff.nodes if getattr(c, side) is not None}
    assert NEXT_OVERLAY in view.docs[1].tools.extra  # the middle's diff against the .pte, one menu entry away


def test_a_selection_in_the_first_pane_selects_its_counterparts_in_the_others(qtbot, chained) -> None:  # type: ignore[no-untyped-def]
    _, view, chain = chained
    with qtbot.waitSignal(view.selection_synced, timeout=TIMEOUT) as blocker:
        view.docs[0].view.node_clicked.emit("conv2d")
    assert blocker.args == [0, "conv2d"]
    assert view.selected(1) == ["convolution"]
    assert view.selected(2) == ["convolution_0"]
    # a source op the pipeline split: all its pieces, in each stage
    with qtbot.waitSignal(view.selection_synced, timeout=TIMEOUT):
        view.docs[0].view.node_clicked.emit("linear")
    assert view.selected(1) == ["permute", "addmm"]
    assert set(view.selected(2)) == set(chain.lowered.result["source_to_pte"]["linear"])
    # and back from the .pte to the source
    with qtbot.waitSignal(view.selection_synced, timeout=TIMEOUT):
        view.docs[2].view.node_clicked.emit("convolution_0")
    assert view.selected(0) == ["conv2d"] and view.selected(1) == ["convolution"]


def test_f3_steps_through_the_pair_whose_pane_holds_the_focus(qtbot, chained) -> None:  # type: ignore[no-untyped-def]
    window, view, _ = chained
    window.tabs.setCurrentWidget(view)
    first, second = view.diff_panels
    at = (first.hits.at, second.hits.at)
    view.docs[2].view.setFocus()  # the .pte's pane: painted by the core ATen -> .pte pair
    qtbot.keyClick(view.docs[2].view, Qt.Key.Key_F3)
    qtbot.waitUntil(lambda: second.hits.at != at[1], timeout=TIMEOUT)
    change = second.diff.nodes[int(second.hits.nodes[second.hits.at])]
    assert first.hits.at == at[0]  # the other pair's list did not move
    assert change.b is not None  # the first change (the root's first): a node of the .pte, revealed there
    qtbot.waitUntil(lambda: view.docs[2].model.selection == change.b, timeout=TIMEOUT)


def test_program_compare_pipeline_asks_for_the_files_and_finds_the_etrecord_beside_the_pte(
        qtbot, chained, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One dialog names the program and each stage it asks for (issue 43 §5: two bare file dialogs said nothing), its
    Browse… dialogs are titled with their stage and open in the program's folder, and the ETRecord beside the .pte is
    used, said in the window."""
    window, first, chain = chained
    window.tabs.setCurrentIndex(0)  # the source's own tab: the Program menu acts on it
    answers = iter([str(chain.core), str(chain.lowered.pte)])
    asked: list[tuple[str, str]] = []

    def file_dialog(_parent, title, folder, _kinds):  # type: ignore[no-untyped-def]
        asked.append((title, folder))
        return next(answers), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", file_dialog)
    seen: dict[str, str] = {}

    def answer() -> None:  # in the dialog's own event loop, as a user would
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, PipelineFilesDialog)
        try:
            seen["words"] = " ".join(w.text() for w in dialog.findChildren(QLabel))
            seen["compare_before"] = str(dialog.compare_button.isEnabled())
            for label in ("2  Core ATen (.pt2)", "3  ExecuTorch (.pte)"):
                qtbot.mouseClick(dialog.browse[label], Qt.MouseButton.LeftButton)
            seen["etrecord"] = dialog.etrecord.text()
            seen["note"] = dialog.etrecord_note.text()
        finally:
            qtbot.mouseClick(dialog.compare_button, Qt.MouseButton.LeftButton)
            if dialog.isVisible():
                dialog.reject()  # Compare was disabled: the test fails below, it never hangs

    later(window, answer)
    action = next(a for a in window.program_actions if a.text() == "Compare &Pipeline…")
    assert action.isEnabled()
    action.trigger()
    assert chain.source.name in seen["words"] and "core ATen decomposition" in seen["words"]
    assert "the .pte lowered from it" in seen["words"] and seen["compare_before"] == "False"
    assert [t for t, _ in asked] == [CORE_TITLE, PTE_TITLE]
    assert asked[0][1] == str(chain.source.parent)  # the program's folder, not the working folder
    assert seen["etrecord"] == str(chain.lowered.etrecord) and "beside the .pte" in seen["note"]
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ChainView)
                    and window.tabs.currentWidget() is not first, timeout=TIMEOUT)
    view = window.tabs.currentWidget()
    assert view.chain.sessions[1].method == "etrecord"  # the ETRecord beside the .pte was read (no torch)
    assert view.chain.diffs[1].matching.a_to_b["convolution"] == "convolution_0"
    window.tabs.removeTab(window.tabs.indexOf(view))
    view.deleteLater()


def test_the_files_named_as_the_viewer_writes_them_are_filled_in(qtbot, chained, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """NAME.core.pt2 (decompose --to core) and NAME.portable.pte with its NAME.portable.etrecord (lower) beside the
    program are offered at once; without an ETRecord, the window says the .pte is matched by structure."""
    _, _, chain = chained
    program = tmp_path / "cnn.pt2"
    for src, name in ((chain.source, "cnn.pt2"), (chain.core, "cnn.core.pt2"), (chain.lowered.pte, "cnn.portable.pte"),
                      (chain.lowered.etrecord, "cnn.portable.etrecord")):
        shutil.copyfile(src, tmp_path / name)
    dialog = PipelineFilesDialog(str(program))
    qtbot.addWidget(dialog)
    assert dialog.files() == PipelineFiles(str(tmp_path / "cnn.core.pt2"), str(tmp_path / "cnn.portable.pte"),
                                           str(tmp_path / "cnn.portable.etrecord"))
    assert dialog.compare_button.isEnabled()
    (tmp_path / "cnn.portable.etrecord").unlink()
    dialog.pte.setText("")
    dialog.pte.setText(str(tmp_path / "cnn.portable.pte"))
    assert dialog.files().etrecord is None and "matched by structure" in dialog.etrecord_note.text()


def test_a_file_that_is_no_etrecord_is_said_in_one_line_and_opens_nothing(qtbot, chained) -> None:  # type: ignore[no-untyped-def]
    window, _, chain = chained
    window.tabs.setCurrentIndex(0)
    doc = window.current_document()
    tabs = window.tabs.count()
    with qtbot.waitSignal(window.open_failed, timeout=TIMEOUT) as blocker:
        window.comparisons.open_chain(doc, str(chain.core), str(chain.lowered.pte), str(chain.source))
    message = blocker.args[0]
    assert str(chain.source) in message and "\n" not in message and "Traceback" not in message
    assert window.tabs.count() == tabs
