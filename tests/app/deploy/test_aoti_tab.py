"""An AOTInductor package as a real tab: each compiled model's device, constants, compile flags and generated
sources (read only, highlighted, searchable); beside them the program's graph when the package holds it too. Made
from the zoo pipeline's packages (tests/zoo/pipeline.py). Screenshots go to PT2V_SCREENSHOTS when it is set."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pt2_viewer.app.deploy.aoti_tab import AotiTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from tests.programs import ExportFailed

TIMEOUT = 120_000


def _package(with_program: bool) -> Path:
    from tests.zoo.pipeline import aoti_path

    try:
        return aoti_path(with_program)
    except ExportFailed as e:
        pytest.skip(str(e))


def _pages(tab: AotiTab) -> dict[str, object]:
    out = {}
    top = tab.outline.topLevelItem(0)
    for i in range(top.childCount()):
        child = top.child(i)
        out[child.text(0)] = child
        for k in range(child.childCount()):
            out[child.child(k).text(0)] = child.child(k)
    return out


def test_a_compiled_package_shows_its_model(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    path = _package(with_program=False)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(path))
    tab = window.current_tab()
    assert isinstance(tab, AotiTab) and tab.current_program() is None and tab.source_file() == str(path)
    model = tab.models[0]
    assert model.device == "cpu" and model.inputs and model.outputs
    assert [(c.fqn, c.shape, c.nbytes) for c in model.constants] == [("linear.weight", (4, 8), 128)]
    assert "-O1" in model.compile_flags or any(f.startswith("-O") for f in model.compile_flags)
    pages = _pages(tab)
    constants = next(item for text, item in pages.items() if text.startswith("Constants (1"))
    tab.outline.setCurrentItem(constants)
    assert tab.table.topLevelItem(0).text(0) == model.constants[0].name
    wrapper = next(item for text, item in pages.items() if text.startswith("wrapper: "))
    tab.outline.setCurrentItem(wrapper)
    assert tab.pages.currentWidget() is tab.code and tab.code.editor.isReadOnly()
    assert tab.code.highlighter is not None and "AOTInductorModel" in tab.code.editor.toPlainText()
    tab.code.find.setText("constants_info_")
    assert tab.code.matches() >= 5 and tab.code.step()
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        window.grab().save(str(Path(folder) / "aoti_tab.png"))


def test_a_package_with_its_program_shows_the_graph_beside(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    path = _package(with_program=True)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as ready:
        window.open_path(str(path))
    tab = window.current_tab()
    assert isinstance(tab, AotiTab)
    doc = tab.current_program()
    assert isinstance(doc, DocumentWidget) and ready.args[0] is doc and tab.graphs() == [doc]
    assert any(n.target == "torch.ops.aten.linear.default" for n in doc.model.program.graph.nodes)
    assert tab.models[0].constants
    kernel = next(item for text, item in _pages(tab).items() if text.startswith("kernel: "))
    tab.outline.setCurrentItem(kernel)
    tab.code.find.setText("cpp_fused")
    assert tab.code.matches() >= 1
    # kernels linked to the nodes they came from, where torch recorded it (or the fused kernel's name says)
    kernels = next(item for text, item in _pages(tab).items() if text.startswith("Kernels ("))
    tab.outline.setCurrentItem(kernels)
    rows = {tab.table.topLevelItem(i).text(0): tab.table.topLevelItem(i) for i in range(tab.table.topLevelItemCount())}
    fused = next(item for name, item in rows.items() if name.startswith("cpp_fused_mul_relu"))
    assert fused.text(3) == "mul, relu"
    assert tab._kernel_clicked(fused, reveal=True) == "mul"
    qtbot.waitUntil(lambda: doc.model.selection is not None, timeout=TIMEOUT)
    addmm = next(item for name, item in rows.items() if "addmm" in name)
    assert addmm.text(3) == "linear" and "aten.addmm" in addmm.text(4)
    tab._kernel_clicked(addmm, reveal=False)
    assert tab.pages.currentWidget() is tab.code and "addmm" in tab.code.editor.textCursor().block().text()
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        window.grab().save(str(Path(folder) / "aoti_tab_program.png"))


@pytest.mark.worker
def test_the_compiled_code_runs_only_after_consent(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                    tmp_path: Path) -> None:
    from tests.zoo.pipeline import small_pt2

    path = tmp_path / "small.aoti.pt2"  # a copy no test has allowed (answers are kept per path and content)
    path.write_bytes(_package(with_program=False).read_bytes())
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(path))
    tab = window.current_tab()
    assert isinstance(tab, AotiTab)
    with qtbot.waitSignal(tab.ran, timeout=TIMEOUT) as refused:  # no dialog here, and nothing allowed yet
        assert tab.run() is False
    assert refused.args[0] is None and "not run" in tab.result.text()
    window.trust_store.allow_native(path)  # what answering Yes records
    tab.source.setText(str(small_pt2()))
    with qtbot.waitSignal(tab.ran, timeout=TIMEOUT) as done:
        assert tab.run() is True
    result = done.args[0]
    assert result.ok, result
    assert result.inputs.source == "sample" and result.outputs[0]["shape"] == [2, 4]
    assert "Latency" in tab.result.text()


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_kernel_times_are_painted_on_the_program(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """A package built with provenance and kernel profiling, holding its program: Run with "Time each kernel" fills
    the Kernels page and paints each kernel's time over the nodes torch's provenance names."""
    from pt2_viewer.app.document.tools import RUN_TIME
    from tests.aoti_package import traced_package_with_program

    try:
        path = traced_package_with_program()
    except RuntimeError as e:
        pytest.skip(str(e))
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):
        window.open_path(str(path))
    tab = window.current_tab()
    assert isinstance(tab, AotiTab) and tab.program is not None
    window.trust_store.allow_native(path)
    tab.time_kernels.setChecked(True)
    with qtbot.waitSignal(tab.ran, timeout=TIMEOUT) as done:
        assert tab.run() is True
    result = done.args[0]
    assert result.ok, result
    assert "Kernels" in tab.result.text() and "painted on the graph" in tab.result.text()
    kernels = next(item for text, item in _pages(tab).items() if text.startswith("Kernels ("))
    tab.outline.setCurrentItem(kernels)
    rows = [tab.table.topLevelItem(i) for i in range(tab.table.topLevelItemCount())]
    assert tab.table.headerItem().text(1) == "ms" and all(float(r.text(1)) > 0 for r in rows)
    overlay = tab.program.tools.extra[RUN_TIME]
    assert tab.program.tools.overlay_name == RUN_TIME
    fused = next(k for k in result.kernel_times if "relu" in k.nodes)
    assert {"relu", "mul", "add"} <= set(overlay.values) and overlay.values["relu"] == overlay.values["mul"]
    assert overlay.values["relu"] == pytest.approx(fused.seconds / len(fused.nodes))
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        window.grab().save(str(Path(folder) / "aoti_kernel_times.png"))
    # each kernel's error on the same graph: the program against its own compiled code (Numerics, What it became)
    from pt2_viewer.core.numerics.readout import OVERLAY_NAME

    doc = tab.program
    doc.panels.setCurrentWidget(doc.numerics_panel)
    doc.numerics_panel.set_candidate("lowered", str(path))
    with qtbot.waitSignal(doc.numerics_panel.finished, timeout=TIMEOUT) as compared:
        doc.numerics_panel.compare()
    numerics = compared.args[0]
    assert numerics.ok and numerics.per_node is True, numerics
    assert {r.node for r in numerics.nodes} == {"linear", "add", "sum_1"}
    assert doc.tools.overlay_name == OVERLAY_NAME and set(doc.tools.extra[OVERLAY_NAME].values) >= {"add", "sum_1"}
    if folder:
        window.grab().save(str(Path(folder) / "aoti_kernel_errors.png"))
