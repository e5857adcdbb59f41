"""A delegated `.pte` in the window: its execution plan as a graph (kernel calls, one block per delegate call naming
its backend and payload), the ExecuTorch panel with the memory plan, delegates, constants and segments, and a click
on a planned tensor selecting the instruction that writes it. Screenshots go to PT2V_SCREENSHOTS when it is set."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from tests.app.drag_and_drop import drag_enter_accepted, drop
from tests.programs import ExportFailed

TIMEOUT = 120_000


@pytest.fixture(scope="module")
def delegated() -> Path:
    pytest.importorskip("executorch", reason="executorch builds the .pte test files (requirements-dev.txt)")
    from tests.zoo.pipeline import pte_path

    try:
        return pte_path("nn_transformer", "xnnpack")
    except ExportFailed as e:
        pytest.skip(str(e))


def _shot(widget, name: str) -> None:  # type: ignore[no-untyped-def]
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        widget.grab().save(str(Path(folder) / name))


def test_a_delegated_pte_opens_with_its_memory_plan(qtbot, window: MainWindow, delegated: Path,  # type: ignore[no-untyped-def]
                                                    tmp_path: Path) -> None:
    renamed = tmp_path / "transformer.bin"  # recognised by its magic, whatever its name
    renamed.write_bytes(delegated.read_bytes())
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(renamed))
    doc = blocker.args[0]
    assert isinstance(doc, DocumentWidget)
    program = doc.model.program
    blocks = [n for n in program.graph.nodes if n.target == "delegate.XnnpackBackend"]
    assert blocks and all(int(n.metadata["payload bytes"]) > 0 for n in blocks)
    panel = doc.panel_widgets["ExecuTorch"]
    doc.panels.setCurrentWidget(panel)
    facts = {panel.facts.topLevelItem(i).text(0): panel.facts.topLevelItem(i).text(1)
             for i in range(panel.facts.topLevelItemCount())}
    assert "XnnpackBackend" in facts["delegate calls"] and "buffer" in facts["peak planned memory"]
    assert panel.memory.topLevelItemCount() > 10 and panel.delegates.topLevelItemCount() == len(
        doc.model.archive.executorch.method(program.name).delegates)
    assert panel.data.topLevelItemCount() > 0
    _shot(window, "pte_memory_plan.png")

    # a planned tensor's row selects the instruction that writes it
    row = next(panel.memory.topLevelItem(i) for i in range(panel.memory.topLevelItemCount())
               if panel.memory.topLevelItem(i).data(0, 256))
    with qtbot.waitSignal(panel.node_requested, timeout=TIMEOUT) as asked:
        panel._clicked(row, 0)
    assert asked.args[0] in {n.name for n in program.graph.nodes}

    # a delegate block's details name its backend and payload
    from pt2_viewer.core.graph.details import node_details

    details = node_details(program, program.graph, blocks[0].name)
    rows = {r.label: r.text for s in details.sections for r in s.rows}
    assert rows["backend"] == "XnnpackBackend" and int(rows["payload bytes"]) > 0
    doc.reveal(blocks[0].name)
    qtbot.waitUntil(lambda: doc.model.selection is not None and not doc.laying_out, timeout=TIMEOUT)
    _shot(window, "pte_delegate.png")


def test_open_offers_pte_and_a_dropped_pte_opens(qtbot, window: MainWindow, delegated: Path,  # type: ignore[no-untyped-def]
                                                 monkeypatch) -> None:
    from PySide6.QtWidgets import QFileDialog

    offered: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (offered.append(a[3]), ("", ""))[1])
    window.open_dialog()
    assert "*.pte" in offered[0] and "ExecuTorch programs (*.pte)" in offered[0]

    mime = drag_enter_accepted(window, delegated)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        drop(window, mime)
    assert blocker.args[0].model.archive.executorch is not None


@pytest.mark.worker
def test_a_pte_runs_from_its_run_panel(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Run in the window runs the method with ExecuTorch's runtime (the run_pte job) and shows its outputs."""
    from PySide6.QtCore import Qt

    from tests.zoo.pipeline import small_pte

    try:
        path = small_pte("xnnpack")
    except ExportFailed as e:
        pytest.skip(str(e))
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    panel = blocker.args[0].run_panel
    with qtbot.waitSignal(panel.finished, timeout=TIMEOUT) as done:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    result = done.args[0]
    assert result.ok, result
    assert result.program_name == "forward" and result.inputs.source == "generated"
    assert panel.outputs.rowCount() == 1 and panel.outputs.item(0, 1).text() == "float32"
    assert panel.latency.text().startswith("<b>Latency</b>")


@pytest.mark.worker
def test_the_source_program_compares_with_what_it_became(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    """Numerics on the source `.pt2`: the candidate is its `.pte` (ExecuTorch's runtime) or its AOTInductor package
    (after the native-code question); the outputs are compared."""
    from PySide6.QtCore import Qt

    from tests.zoo.pipeline import aoti_path, small_pt2, small_pte

    try:
        source, lowered, package = small_pt2(), small_pte("xnnpack"), aoti_path(False)
    except ExportFailed as e:
        pytest.skip(str(e))
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(source))
    panel = blocker.args[0].numerics_panel
    unasked = tmp_path / "package.pt2"  # a copy no test has allowed (answers are kept per path and content)
    unasked.write_bytes(package.read_bytes())
    panel.set_candidate("lowered", str(unasked))
    assert isinstance(panel.options(), str)  # no dialog here, and the package's code was not allowed
    window.trust_store.allow_native(package)
    panel.trust = window.trust_store
    for candidate, kind in ((lowered, "pte"), (package, "package")):
        panel.set_candidate("lowered", str(candidate))
        with qtbot.waitSignal(panel.finished, timeout=TIMEOUT) as done:
            qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
        result = done.args[0]
        assert result.ok and result.kind == kind and result.compared == 1, result
        assert result.first_divergence is None


def test_compare_with_offers_a_pte_and_draws_both(qtbot, window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Program > Compare With… a `.pte`: the source and its execution plan side by side, with the op statistics."""
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    from pt2_viewer.app.compare.view import CompareView
    from tests.zoo.pipeline import small_pt2, small_pte

    try:
        source, lowered = small_pt2(), small_pte("portable")
    except ExportFailed as e:
        pytest.skip(str(e))
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(source))
    offered: list[str] = []
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: (a[-3][-1], True))  # "another file"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (offered.append(a[3]), (str(lowered), ""))[1])
    window.compare_dialog()
    qtbot.waitUntil(lambda: isinstance(window.current_tab(), CompareView), timeout=TIMEOUT)
    assert "*.pte" in offered[0]
    view = window.current_tab()
    assert [g.model.archive.executorch is not None for g in view.graphs()] == [False, True]
