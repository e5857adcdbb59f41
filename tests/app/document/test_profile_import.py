"""View > Overlay > Import Profile… on the zoo CNN opened in the real window, with its real eager CPU profile
(tests/profile_programs.py): the nodes are painted with the run-time overlay under "Profile time", their numbers the
command's, Details lists a node's calls and events, and the transformer's trace is refused on the status bar.
Import Compiled Profile (with TORCH_TRACE)… does the same for the CNN compiled by torch.compile, through its
TORCH_TRACE's provenance (tests/compiled_profile_programs.py). The trace is read off the GUI thread: the window
says it is reading, and the test waits for the answer. The file dialogs are answered by the test (none is shown).
Screenshots of both overlays, a node selected, go to PT2V_SCREENSHOTS when it is set."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMenu

from pt2_viewer.app.document.overlay_menu import fill_overlay_menu
from pt2_viewer.app.document.profile_import import PROFILE_TIME
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.formats import registry
from pt2_viewer.core.profile.attribute import attribute
from pt2_viewer.core.profile.load import profile_attribution
from pt2_viewer.core.profile.trace_file import read_trace
from tests.app.graph.test_graph_tools import TIMEOUT, open_and_wait
from tests.compiled_profile_programs import compiled_profile
from tests.profile_programs import profile_of, program_path

pytestmark = pytest.mark.zoo  # the zoo's programs and their profiles


def _import(qtbot, window: MainWindow, doc: DocumentWidget, trace: Path,  # type: ignore[no-untyped-def]
            monkeypatch: pytest.MonkeyPatch, torch_trace: Path | None = None) -> list[str]:
    """Choose `trace` (and `torch_trace`) in the Import menu's dialogs; the status lines it gave, once it answered."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *_: (str(trace), ""))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_: str(torch_trace))
    said: list[str] = []
    doc.status.connect(said.append)
    menu = QMenu(window)
    fill_overlay_menu(menu, doc, window)
    action = "Import Compiled Profile (with TORCH_TRACE)…" if torch_trace else "Import Profile…"
    next(a for a in menu.actions() if a.text() == action).trigger()
    assert len(said) == 1 and said[0].startswith(f"Reading profile {trace.name}")  # the answer: from the thread
    qtbot.waitUntil(lambda: len(said) > 1, timeout=TIMEOUT)
    return said[1:]


def _shot(qtbot, window: MainWindow, doc: DocumentWidget, node: str, name: str) -> None:  # type: ignore[no-untyped-def]
    """With PT2V_SCREENSHOTS: the window with `node` selected, its figures in Details."""
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        doc.reveal(node)
        doc.select(node)
        qtbot.waitUntil(lambda: not doc.laying_out and doc.model.selection is not None, timeout=TIMEOUT)
        window.grab().save(str(Path(folder) / name))


def test_a_profile_paints_each_node_with_its_time(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    program = program_path("resnet18")
    trace = profile_of("resnet18") / "trace.json"
    doc = open_and_wait(qtbot, window, program)
    said = _import(qtbot, window, doc, trace, monkeypatch)
    assert doc.tools.overlay_name == PROFILE_TIME and doc.tools.legend.isVisible()
    expected = attribute(registry.read(program).program(), read_trace(trace))
    overlay = doc.tools.extra[PROFILE_TIME]
    assert overlay.values == pytest.approx({n.node: n.us / 1e6 for n in expected.nodes})
    assert overlay.aggregate == "sum"  # a collapsed group shows the sum of its nodes, as a run's time does
    rows = overlay.detail_rows("conv2d")  # what Details lists under "Profile time"
    assert dict(rows[:4])["calls"] == "1" and dict(rows[:4])["device"] == "cpu"
    events = [text for label, text in rows if label == "event"]
    assert len(events) == 1 and events[0].startswith("aten::conv2d: ")
    assert said[-1].startswith("Profile trace.json: 69 nodes timed (1 run on cpu;")
    _shot(qtbot, window, doc, "conv2d", "profile_eager.png")


def test_a_trace_of_another_program_is_one_line_on_the_status_bar(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    doc = open_and_wait(qtbot, window, program_path("resnet18"))
    said = _import(qtbot, window, doc, profile_of("nn_transformer") / "trace.json", monkeypatch)
    assert len(said) == 1 and "not a run of" in said[0] and "\n" not in said[0]
    assert PROFILE_TIME not in doc.tools.extra and doc.tools.overlay_name != PROFILE_TIME


def test_a_compiled_profile_paints_the_kernels_time_through_provenance(  # type: ignore[no-untyped-def]
        qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    program = program_path("resnet18")
    run = compiled_profile() / "provenance"
    doc = open_and_wait(qtbot, window, program)
    said = _import(qtbot, window, doc, run / "trace.json", monkeypatch, run / "torch_trace")
    assert doc.tools.overlay_name == PROFILE_TIME and doc.tools.legend.isVisible()
    expected = profile_attribution(registry.read(program).program(), str(run / "trace.json"), str(run / "torch_trace"))
    overlay = doc.tools.extra[PROFILE_TIME]
    assert overlay.values == pytest.approx({n.node: n.us / 1e6 for n in expected.nodes if n.us > 0})
    events = [text for label, text in overlay.detail_rows("conv2d_5") if label == "event"]
    assert any(re.fullmatch(r"[\d.]+ [µm]?s extern_kernels\.convolution:\d+", e) for e in events)  # all its own
    assert any(re.fullmatch(r"[\d.]+ [µm]?s \(1/\d+\) cpp_fused_[\w…]+:\d+", e) for e in events)  # a fused share
    assert all(len(e.split(" ", 3)[-1]) <= 30 for e in events)  # a long kernel name cut in the middle, its call kept
    assert said[-1].startswith("Profile trace.json: ") and "matched through provenance" in said[-1]
    _shot(qtbot, window, doc, "conv2d_5", "profile_compiled.png")
