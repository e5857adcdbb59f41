"""View > Overlay > Import ETDump… in the window (issue 41 §2): an ETDump written by a separate ExecuTorch runtime
process (tests/etdump_recordings.py) of the zoo's CNN lowered to XNNPACK, imported through the `run_pte` job the
command line runs, paints the `.pte` (and, on the lowered tab, its source) with the numbers `run FILE.pte --etdump
--json` prints: each node's least time painted, its median, p90 and runs in Details, the events XNNPACK logged inside
its delegate calls listed there. Offscreen; screenshots go to PT2V_SCREENSHOTS when it is set."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.deploy.etdump_overlay import ETDUMP_TIME
from pt2_viewer.core.util.words import format_seconds
from tests.deploy_programs import CNN, Lowered, lowered_or_skip
from tests.etdump_recordings import Recording, record

pytestmark = pytest.mark.worker  # the dialog starts the run_pte job's worker
TIMEOUT = 300_000


@pytest.fixture(scope="module")
def xnnpack(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lowered, Recording]:
    low = lowered_or_skip(CNN, "xnnpack")
    return low, record(low.pte, low.source, tmp_path_factory.mktemp("xnnpack"))


@pytest.fixture(scope="module")
def cli_json(xnnpack: tuple[Lowered, Recording]) -> dict[str, Any]:
    """What `run FILE.pte --etdump RUN.etdp --debug-buffer RUN.bin --etrecord --source --json` prints."""
    from tests.core.jobs.test_hostile import cli_streams

    low, rec = xnnpack
    rc, out, err = cli_streams("run", str(low.pte), "--etdump", str(rec.etdump), "--debug-buffer",
                               str(rec.debug_buffer), "--etrecord", str(low.etrecord), "--source", str(low.source),
                               "--json", "-q")
    assert rc == 0, err
    return dict(json.loads(out))


def _shot(widget, name: str) -> None:  # type: ignore[no-untyped-def]
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        widget.grab().save(str(Path(folder) / name))


def _open(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    doc = blocker.args[0]
    assert isinstance(doc, DocumentWidget)
    return doc


def _dialog(window: MainWindow, doc: DocumentWidget):  # type: ignore[no-untyped-def]
    """View > Overlay > Import ETDump… on `doc`'s graph: the dialog it opened."""
    from pt2_viewer.app.document.etdump_import import EtdumpImportDialog
    from pt2_viewer.app.document.overlay_menu import fill_overlay_menu

    fill_overlay_menu(window.overlay_menu, doc, window)
    action = next(a for a in window.overlay_menu.actions() if a.text() == "Import ETDump…")
    assert action.isEnabled()
    action.trigger()
    return window.findChildren(EtdumpImportDialog)[-1]


def _import(qtbot, window: MainWindow, doc: DocumentWidget, low: Lowered, rec: Recording):  # type: ignore[no-untyped-def]
    """The dialog on `doc`'s graph, its three files filled in, Import clicked; the dialog once it painted."""
    dialog = _dialog(window, doc)
    dialog.etdump.setText(str(rec.etdump))
    dialog.debug_buffer.setText(str(rec.debug_buffer))
    dialog.etrecord.setText(str(low.etrecord))
    with qtbot.waitSignal(dialog.imported, timeout=TIMEOUT):
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    return dialog


def _rows(overlay: Any, node: str) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for label, text in overlay.detail_rows(node):
        rows.setdefault(label, []).append(text)
    return rows


def test_an_etdump_imported_on_a_pte_tab_paints_the_clis_numbers(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                 xnnpack: tuple[Lowered, Recording],
                                                                 cli_json: dict[str, Any]) -> None:
    low, rec = xnnpack
    doc = _open(qtbot, window, low.pte)
    dialog = _import(qtbot, window, doc, low, rec)
    assert dialog.run_result is not None and dialog.run_result.etdump == str(rec.etdump)
    overlay = doc.tools.extra[ETDUMP_TIME]
    assert doc.tools.overlay_name == ETDUMP_TIME  # shown now
    assert overlay.values == cli_json["node_times"]  # the least time of each instruction and delegate call
    stats = cli_json["node_time_stats"]
    assert set(overlay.values) == set(stats) and len(stats) == len(
        [n for n in doc.model.program.graph.nodes if "instruction" in n.metadata])
    for node, s in stats.items():
        rows = _rows(overlay, node)
        assert rows["median"] == [format_seconds(s["median_s"])] and rows["p90"] == [format_seconds(s["p90_s"])]
        assert rows["runs"] == [str(s["count"])] == [str(rec.runs)]
    events = cli_json["delegate_events"]
    assert len(events) > 10
    for call in {e["node"] for e in events}:  # each delegate call lists the slowest events XNNPACK logged inside it
        mine = sorted((e for e in events if e["node"] == call), key=lambda e: -e["median_s"])
        listed = _rows(overlay, call)["event"]
        assert listed[0] == f"{format_seconds(mine[0]['median_s'])}, p90 {format_seconds(mine[0]['p90_s'])}  " \
                            f"{mine[0]['event']}"
        assert len(listed) == min(len(mine), 8) + (len(mine) > 8)
    assert overlay.notes[0].startswith(f"{rec.runs} recorded runs in {rec.etdump.name}: the least time painted")
    assert f"{len(events)} events inside delegates, listed on their calls" in overlay.notes
    assert doc.tools.legend.overlay is overlay and overlay.notes[0] in doc.tools.legend.notes()  # the legend says it

    slowest = max(overlay.values, key=lambda n: overlay.values[n])
    doc.reveal(slowest)
    doc.select(slowest)
    qtbot.waitUntil(lambda: not doc.laying_out and doc.model.selection is not None, timeout=TIMEOUT)
    dialog.close()
    _shot(window, "etdump_pte.png")


def test_on_the_lowered_tab_the_source_is_painted_too(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                     xnnpack: tuple[Lowered, Recording],
                                                     cli_json: dict[str, Any]) -> None:
    from pt2_viewer.app.compare.view import CompareView
    from pt2_viewer.core.compare.session import LEFT, RIGHT
    from pt2_viewer.core.jobs.schemas.lower import LowerResult
    from pt2_viewer.core.pte.reader import read_pte

    low, rec = xnnpack
    opened = _open(qtbot, window, low.source)
    tabs = window.tabs.count()
    window.comparisons.open_lowered(opened, LowerResult.from_json(low.result), read_pte(low.pte))
    qtbot.waitUntil(lambda: window.tabs.count() == tabs + 1, timeout=TIMEOUT)
    view = window.tabs.widget(window.tabs.currentIndex())
    assert isinstance(view, CompareView)
    source, pte = view.docs[LEFT], view.docs[RIGHT]
    _import(qtbot, window, source, low, rec)  # asked on the source's side: the .pte beside it is the recording's
    assert pte.tools.extra[ETDUMP_TIME].values == cli_json["node_times"]
    painted = source.tools.extra[ETDUMP_TIME]
    assert painted.values == pytest.approx(cli_json["source_node_times"], rel=1e-12) and painted.values
    assert source.tools.overlay_name == ETDUMP_TIME
    slowest = max(painted.values, key=lambda n: painted.values[n])
    assert _rows(painted, slowest)["time"] == [format_seconds(cli_json["source_node_times"][slowest])]
    source.reveal(slowest)
    source.select(slowest)
    qtbot.waitUntil(lambda: not source.laying_out and not pte.laying_out, timeout=TIMEOUT)
    _shot(window, "etdump_lowered.png")


def test_a_recording_of_another_program_is_refused_in_the_dialog(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                 xnnpack: tuple[Lowered, Recording],
                                                                 tmp_path: Path) -> None:
    low, _ = xnnpack
    portable = lowered_or_skip(CNN, "portable")
    other = record(portable.pte, portable.source, tmp_path / "portable", runs=1)
    doc = _open(qtbot, window, low.pte)
    dialog = _dialog(window, doc)
    dialog.etdump.setText(str(other.etdump))
    with qtbot.waitSignal(dialog.failed, timeout=TIMEOUT) as failed:
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert failed.args[0].startswith(f"The ETDump 'run.etdp' was not recorded from '{low.pte.name}'")
    assert dialog.failure.error.text() == failed.args[0] and ETDUMP_TIME not in doc.tools.extra
