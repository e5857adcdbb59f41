"""View > Overlay > Import Profile… on an `.onnx` tab, in the real window: ONNX Runtime's own profile of the BatchNorm
CNN's real export (tests/onnx_profiles.py, ONNX Runtime's default optimization, which fuses each Conv with its Relu)
is read by the same importer as a torch.profiler trace and painted with the run-time overlay: the values are the
command's, a fused node's Details shows its share, and another model's profile is one line on the status bar."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMenu

from pt2_viewer.app.document.overlay_menu import fill_overlay_menu
from pt2_viewer.app.document.profile_import import PROFILE_TIME
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.formats import registry
from pt2_viewer.core.profile.load import profile_attribution
from tests.app.document.test_profile_import import _import
from tests.app.graph.test_graph_tools import open_and_wait
from tests.onnx_programs import CNN, TRANSFORMER

pytest.importorskip("onnxruntime", reason="the profiles are ONNX Runtime's own (pip install pt2-viewer[onnx])")

from tests.onnx_profiles import exported, ort_profile  # noqa: E402 (needs numpy, which onnxruntime brings)


@pytest.fixture(scope="module")
def profile_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    folder = tmp_path_factory.mktemp("ort_profiles")
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = ort_profile(exported(name), folder)
        return made[name]
    return get


def test_an_onnx_runtime_profile_paints_the_onnx_tab(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      profile_of: Callable[[str], Path]) -> None:
    model, profile = exported(CNN), profile_of(CNN)
    doc = open_and_wait(qtbot, window, model)
    said = _import(qtbot, window, doc, profile, monkeypatch)
    assert doc.tools.overlay_name == PROFILE_TIME and doc.tools.legend.isVisible()
    archive = registry.read(model)
    expected = profile_attribution(archive.program(), str(profile), archive=archive)
    overlay = doc.tools.extra[PROFILE_TIME]
    assert overlay.values == pytest.approx({n.node: n.us / 1e6 for n in expected.nodes if n.us > 0})
    assert set(overlay.values) == {"node_Conv_17", "node_relu", "node_Conv_18", "node_relu_1", "node_mean",
                                   "node_linear"}
    rows = overlay.detail_rows("node_relu")
    assert dict(rows[:4])["calls"] == "3" and dict(rows[:4])["device"] == "cpu"
    events = [text for label, text in rows if label == "event"]
    assert len(events) == 3 and all(e.endswith("(1/2) relu_nchwc_kernel_time") for e in events)  # Conv+Relu's half
    assert said[-1].startswith(f"Profile {profile.name}: 6 nodes timed (3 runs on cpu;")
    assert "ReorderOutput" in said[-1]  # the optimizer's own nodes, unattributed, are named


def test_another_models_profile_is_one_line_on_the_onnx_tab(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            profile_of: Callable[[str], Path]) -> None:
    doc = open_and_wait(qtbot, window, exported(CNN))
    said = _import(qtbot, window, doc, profile_of(TRANSFORMER), monkeypatch)
    assert len(said) == 1 and "not a profile of" in said[0] and "\n" not in said[0]
    assert PROFILE_TIME not in doc.tools.extra


def test_the_onnx_tab_asks_for_onnx_runtimes_profile(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    doc = open_and_wait(qtbot, window, exported(CNN))
    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args: asked.append(args[1:]) or ("", ""))
    menu = QMenu(window)
    fill_overlay_menu(menu, doc, window)
    actions = {a.text(): a for a in menu.actions()}
    assert not actions["Import Compiled Profile (with TORCH_TRACE)…"].isEnabled()  # no TORCH_TRACE for an .onnx
    actions["Import Profile…"].trigger()
    assert asked[0][0] == "Import an ONNX Runtime profile" and "onnxruntime_profile_*.json" in asked[0][2]
