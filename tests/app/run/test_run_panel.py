"""The Run tab in the window, through the real worker: run a small program on CPU and see its output rows, latency
and hottest nodes, the per-node heat tinting the graph; Run on CUDA disabled, saying why, on a machine without a GPU;
a program calling a custom op that is not registered explains itself and runs once the user names the file that
defines it. Offscreen; every wait is on a signal or a condition."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from PySide6.QtCore import Qt

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.run.panel import CudaProbe, RunPanel
from pt2_viewer.core.platform.trust import TrustStore
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)

TIMEOUT = 60_000
JOB_TIMEOUT = 180_000  # the worker imports torch; the test machine's CPUs are shared

OP_DEFINITION = '''"""Defines the custom op the test program calls, as a user's own module would."""
import torch


@torch.library.custom_op("pt2v_test::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


@scale_add.register_fake
def _(x, y, alpha):
    return torch.empty_like(x)
'''


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(8, 32)
        self.down = torch.nn.Linear(32, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.gelu(self.up(x))).log_softmax(-1)


@pytest.fixture(scope="module")
def mlp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(Mlp(), (torch.randn(4, 8),), dynamic_shapes=({0: batch},))
    path = tmp_path_factory.mktemp("run-panel") / "mlp.pt2"
    torch.export.save(ep, path)
    return path



def open_run_tab(qtbot, window: MainWindow, path: Path) -> tuple[DocumentWidget, RunPanel]:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    doc = blocker.args[0]
    run_action = next(a for m in window.menuBar().actions() if m.text() == "&Program"
                      for a in m.menu().actions() if a.text() == "&Run…")
    run_action.trigger()
    assert doc.panels.currentWidget() is doc.run_panel
    return doc, doc.run_panel


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_run_on_cpu_shows_outputs_latency_and_heat(qtbot, window: MainWindow, mlp: Path) -> None:  # type: ignore[no-untyped-def]
    doc, panel = open_run_tab(qtbot, window, mlp)
    (symbol,) = panel.dims
    assert panel.input_mode.currentData() == "auto" and not panel.dims[symbol].isEnabled()
    panel.input_mode.setCurrentIndex(panel.input_mode.findData("generated"))
    assert panel.dims[symbol].isEnabled()
    panel.dims[symbol].setValue(6)
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result.ok and result.inputs.sizes == {symbol: 6}
    assert panel.outputs.rowCount() == 1
    cells = [panel.outputs.item(0, c).text() for c in range(panel.outputs.columnCount())]
    assert cells[:3] == ["out", "float32", "[6, 3]"] and cells[6:8] == ["0", "0"]
    assert float(cells[4]) <= 0  # log_softmax: every value is at most 0
    assert panel.latency.text().startswith("<b>Latency</b>: median ")
    assert panel.stage.text() == "Ran on cpu with generated inputs."

    hottest = next(iter(result.node_times))
    assert doc.view.heat[hottest] == 1.0
    assert doc.view.nodes[hottest].heat == 1.0 and doc.view.nodes[hottest].heat_fill is not None
    assert set(doc.view.heat) == set(result.node_times) and set(doc.view.heat) <= set(doc.view.nodes)
    assert doc.view.nodes["x"].heat is None  # a placeholder was not timed
    assert panel.hot.count() == min(10, len(result.node_times))
    assert panel.hot.item(0).text().startswith(hottest)
    assert panel.hot.height() >= panel.hot.count() * panel.hot.sizeHintForRow(0)  # every hottest node on screen
    low, high = doc.tools.legend.overlay.legend  # the run-time legend gives the times
    assert low.label.startswith("fastest ") and high.label.startswith("slowest ") and high.label[-1] == "s"
    qtbot.mouseClick(panel.hot.viewport(), Qt.MouseButton.LeftButton,
                     pos=panel.hot.visualItemRect(panel.hot.item(0)).center())
    assert doc.model.selection == hottest
    assert doc.tools.step_bar.label.text() == f"hottest nodes: 1 of {panel.hot.count()}"  # next: the second hottest

    doc.expand_all()  # a re-layout keeps the overlay
    qtbot.waitUntil(lambda: doc.view.nodes.get(hottest) is not None and doc.view.nodes[hottest].heat == 1.0,
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: doc.view.painted > 0, timeout=TIMEOUT)
    doc.show_run_panel()


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_cuda_button_is_disabled_saying_why(qtbot, window: MainWindow, mlp: Path,  # type: ignore[no-untyped-def]
                                            monkeypatch) -> None:
    monkeypatch.setattr(CudaProbe, "_shared", None)  # forget what earlier runs said: ask the worker afresh
    _, panel = open_run_tab(qtbot, window, mlp)
    assert not panel.cuda_button.isEnabled() and panel.cuda_reason.text() == ""  # not known yet
    qtbot.waitUntil(lambda: panel.cuda_reason.text() != "", timeout=JOB_TIMEOUT)  # the worker answered (once)
    assert not panel.cuda_button.isEnabled()
    reason = CudaProbe.shared().status.reason  # type: ignore[union-attr]
    assert "CPU only" in reason or "no usable GPU" in reason
    assert panel.cuda_button.toolTip() == f"CUDA is not available: {reason}."
    assert panel.cuda_reason.text() == f"Run on CUDA is off: {reason}."
    assert panel.cpu_button.isEnabled()


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_missing_custom_op_is_explained_and_import_first_fixes_it(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                  pt2_path: Callable[[str], Path],  # noqa: F811
                                                                  tmp_path: Path) -> None:
    _, panel = open_run_tab(qtbot, window, pt2_path("custom_op"))
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0].error.kind == "missing_op"
    assert panel.error.isVisible() and "pt2v_test::scale_add" in panel.error.text()
    assert "under 'Import first'" in panel.error.text()
    assert panel.outputs.rowCount() == 0

    ops = tmp_path / "my_ops.py"
    ops.write_text(OP_DEFINITION)
    panel.preload.setText(str(ops))
    qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)  # not trusted: refused before any worker starts
    assert "has not been trusted" in panel.error.text() and not panel.driver.running
    TrustStore.default().trust(ops)
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result.ok, result.error
    assert not panel.error.isVisible() and panel.outputs.rowCount() == 1


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_unbounded_dims_are_listed_in_input_order_and_run(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                          pt2_path: Callable[[str], Path]) -> None:  # noqa: F811
    _, panel = open_run_tab(qtbot, window, pt2_path("tutorial_auto_dims"))  # every dim Dim.AUTO: no upper end
    spins = list(panel.dims.values())
    form = spins[0].parentWidget().layout()
    assert [form.labelForField(s).text() for s in spins] == ["w.shape[0]", "x.shape[0], y.shape[1]", "y.shape[0]"]
    assert [s.toolTip().split(" in ")[1] for s in spins] == ["[2, ∞]"] * 3
    assert [s.value() for s in spins] == [6, 4, 8]  # the sizes the program was traced with
    panel.input_mode.setCurrentIndex(panel.input_mode.findData("generated"))
    spins[0].setValue(9)
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0].ok, blocker.args[0].error
    assert [panel.outputs.item(r, 2).text() for r in range(panel.outputs.rowCount())] == ["[9, 3]", "[32]"]
    assert not panel.error.isVisible()


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_mixed_none_int_bool_inputs_run(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                        pt2_path: Callable[[str], Path]) -> None:  # noqa: F811
    _, panel = open_run_tab(qtbot, window, pt2_path("tutorial_mixed"))
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result.ok, result.error
    assert [(v["name"], v.get("value")) for v in result.inputs.values[2:]] == [("int_val", 16),
                                                                                       ("bool_val", False)]
    assert panel.outputs.rowCount() == 1 and panel.outputs.item(0, 2).text() == "[4]"


@pytest.mark.worker
def test_a_long_import_line_wraps_and_nothing_is_cut_at_1280x800(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Issue 30: after a run, one long unwrapped "imported transformers…" line widened the panel's body past its
    column: Cancel was cut to "C", the latency line cut, with no way to scroll to them. A PT2E program makes the
    worker import torch's quantized_decomposed op library, and say so in the same kind of line."""
    from tests.zoo.cache import program_by_id, zoo_path

    window.resize(1280, 800)
    _, panel = open_run_tab(qtbot, window, zoo_path(program_by_id("pt2e_cnn")))
    panel.runs.setValue(1)
    panel.warmup.setValue(0)
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0].ok, panel.error.text()
    assert "imported torch.ao.quantization.fx._decomposed (torch " in panel.stage.text()
    qtbot.waitUntil(lambda: panel.widget().width() <= panel.viewport().width())  # the body fits its column
    for button in (panel.cpu_button, panel.cancel_button):
        assert button.width() >= button.sizeHint().width(), button.text()  # "Cancel" whole, not "C"
    assert panel.latency.text().startswith("<b>Latency</b>")
    assert panel.latency.width() <= panel.viewport().width()
