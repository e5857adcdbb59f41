"""What a `.pte` and an `.onnx` tab say of themselves and offer to run (issue 43 §2): Details give each format's own
facts (a `.pte`'s ExecuTorch schema and backends, an `.onnx`'s IR version, opsets and producer), never torch's
export schema or a "torch ?"; a `.pte`'s Run tab offers ExecuTorch's run alone (no torch.compile, AOTInductor or
CUDA); an `.onnx`'s Run and Numerics tabs are disabled and say why (the run jobs load a .pt2 or a .pte)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.graph.properties import program_properties
from tests.programs import ExportFailed

TIMEOUT = 120_000


def _opened(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    doc = blocker.args[0]
    assert isinstance(doc, DocumentWidget)
    return doc


def _facts(doc: DocumentWidget) -> dict[str, str]:
    props = program_properties(doc.model.archive, doc.model.program)
    return {r.label: r.text for r in props.section("Program").rows}


def _tab(doc: DocumentWidget, title: str) -> int:
    return next(i for i in range(doc.panels.count()) if doc.panels.tabText(i) == title)


def _built(needs: str, build: Callable[[], Path]) -> Path:
    """A fixture file from its builder, skipped where the package that builds it (`needs`) is not installed."""
    pytest.importorskip(needs, reason=f"{needs} builds this test's file (requirements-dev.txt)")
    try:
        return build()
    except ExportFailed as e:
        pytest.skip(str(e))


def _pte(kind: str) -> Path:
    from tests.zoo.pipeline import small_pte

    return _built("executorch", lambda: small_pte(kind))


def test_a_pte_says_its_executorch_schema_and_runs_only_with_executorch(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = _opened(qtbot, window, _pte("xnnpack"))
    et = doc.model.archive.executorch
    facts = _facts(doc)
    assert "torch" not in facts and "dialect" not in facts
    assert facts["schema"] == f"{et.identifier}, version {et.schema_version}" and et.identifier.startswith("ET")
    calls = sum(1 for m in et.methods for d in m.delegates if d.backend == "XnnpackBackend")
    assert calls and facts["backends"] == f"XnnpackBackend ({calls} delegate call{'s' * (calls != 1)})"

    panel = doc.run_panel
    doc.show_run_panel()
    assert panel.executorch and panel.isVisible()
    assert not panel.compile.isVisible() and not panel.aoti.isVisible() and not panel.aoti_path.isVisible()
    assert panel.node_times.isVisible() and panel.cpu_button.isEnabled()
    assert not panel.cuda_button.isEnabled() and "CPU" in panel.cuda_reason.text()
    numerics = _tab(doc, "Numerics")  # it would load the .pte as a .pt2: the source's Numerics compares it
    assert not doc.panels.isTabEnabled(numerics) and "Lowered file" in doc.panels.tabToolTip(numerics)


def test_a_portable_pte_says_it_has_no_backend(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(_opened(qtbot, window, _pte("portable")))
    assert facts["backends"].startswith("none")


def test_an_onnx_model_says_its_ir_and_opsets_and_offers_no_run(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from tests.onnx_programs import CNN, onnx_path

    path = _built("onnxscript", lambda: onnx_path(CNN))  # torch.onnx's dynamo exporter needs onnxscript
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    doc = _opened(qtbot, window, path)
    facts = _facts(doc)
    assert "schema" not in facts and "torch" not in facts
    assert facts["IR version"] == str(model.ir_version)
    assert facts["opsets"] == ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in
                                        sorted(model.opset_import, key=lambda o: o.domain or "ai.onnx"))
    assert facts["producer"] == f"{model.producer_name} {model.producer_version}"
    for title in ("Run", "Numerics"):
        index = _tab(doc, title)
        assert not doc.panels.isTabEnabled(index)
        assert "not ONNX models" in doc.panels.tabToolTip(index)
    doc.show_run_panel()  # Run… (Ctrl+R) shows why, instead of a panel that would send the file to the .pt2 job
    assert "onnxruntime" in doc.panels.currentWidget().text()
    assert "Lowered file" in doc.panels.tabToolTip(_tab(doc, "Numerics"))  # its numerics: from its source .pt2
