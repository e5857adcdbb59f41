"""Every format of the registry (core/formats/registry.py) opened by the window's own open path, as File > Open, a
drop, Open Recent and the command line all call it (`MainWindow.open_path`): an export archive as a program's graph,
an AOTInductor package in its tab (alone, and with its program beside it), a `.pte` with its ExecuTorch panel, a model
script run by the export worker, each real `.onnx` export of tests/onnx_programs.py grouped by its modules (an If's
branches entered as a cond's); and a hostile ZIP64 size and each hostile `.onnx` (tests/hostile_onnx.py) said in the
window in `info`'s own words. Real files: the bundled example, the zoo pipeline's package and `.pte`
(tests/zoo/pipeline.py), the bundled model script, the ONNX exports."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from pt2_viewer.app.deploy.aoti_tab import AotiTab
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.cli import info
from pt2_viewer.core.model.program import NodeOp
from tests import hostile_archives as hostile
from tests import hostile_onnx
from tests.onnx_programs import CNN, COND, DECODER, DYNAMIC, RESNET, TRANSFORMER, onnx_path
from tests.programs import REPO_ROOT, ExportFailed

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
SCRIPT = REPO_ROOT / "resources" / "examples" / "convention.py"
TIMEOUT = 240_000


def _opened(qtbot, window: MainWindow, path: Path) -> object:  # type: ignore[no-untyped-def]
    """What `open_path` showed: the document (None for a package with no program), or the message it failed with."""
    shown: list[object] = []
    window.document_ready.connect(shown.append)
    window.open_failed.connect(shown.append)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: bool(shown), timeout=TIMEOUT)
    return shown[0]


def test_each_format_opens_in_its_tab(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("executorch", reason="executorch builds the .pte test file (requirements-dev.txt)")
    from tests.zoo.pipeline import aoti_path, small_pte

    try:
        files = {"aoti": aoti_path(), "aoti with program": aoti_path(with_program=True), "pte": small_pte("xnnpack")}
    except ExportFailed as e:
        pytest.skip(str(e))

    doc = _opened(qtbot, window, EXAMPLE)
    assert isinstance(doc, DocumentWidget) and window.current_tab() is doc and doc.model.archive.executorch is None
    assert "ExecuTorch" not in doc.panel_widgets

    assert _opened(qtbot, window, files["aoti"]) is None
    package = window.current_tab()
    assert isinstance(package, AotiTab) and package.current_program() is None

    doc = _opened(qtbot, window, files["aoti with program"])
    package = window.current_tab()
    assert isinstance(package, AotiTab) and isinstance(doc, DocumentWidget) and package.current_program() is doc

    doc = _opened(qtbot, window, files["pte"])
    assert isinstance(doc, DocumentWidget) and window.current_tab() is doc
    assert doc.model.archive.executorch is not None and "ExecuTorch" in doc.panel_widgets
    assert window.tabs.count() == 4


@pytest.mark.worker  # the script runs in the export worker (tests/conftest.py checks)
def test_a_script_opens_in_the_export_worker(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.export.script_document import ScriptDocument

    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the worker inherits it; the machine is shared
    window = MainWindow(interactive=False, trust_scripts=True)
    qtbot.addWidget(window)
    try:
        doc = _opened(qtbot, window, SCRIPT)
        script = window.current_tab()
        assert isinstance(script, ScriptDocument) and isinstance(doc, DocumentWidget)
        assert script.current_program() is doc and doc.model.program.graph.nodes
    finally:
        for i in range(window.tabs.count()):
            if isinstance(tab := window.tabs.widget(i), ScriptDocument):
                tab.shutdown()
        window.layouts.close()


def test_a_hostile_zip64_size_is_said_in_the_window_as_info_says_it(qtbot, window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A member whose ZIP64 size says 2**62 bytes: the parsed-program cache reads members without zipfile, and once
    allocated what the archive stated (the window said "internal error MemoryError"); now both say the one line the
    reader says."""
    path = hostile.zip64_size(EXAMPLE, tmp_path / "zip64.pt2")
    assert info.main(argparse.Namespace(file=str(path), json=False)) == 1
    said = capsys.readouterr().err.strip()
    assert said.startswith("pt2-viewer: In 'zip64.pt2', the entry 'models/model.json' is ") and "\n" not in said
    message = _opened(qtbot, window, path)
    assert message == said.removeprefix("pt2-viewer: ")
    assert window.tabs.count() == 0
    copy = Path(shutil.copyfile(EXAMPLE, tmp_path / "example.pt2"))  # the window is still usable
    assert isinstance(_opened(qtbot, window, copy), DocumentWidget)


ONNX_MODULES = {  # module groups each export's graph must have
    CNN: {"bn1", "bn2", "fc"},
    TRANSFORMER: {"layers.0.self_attn", "layers.1.norm2"},
    DYNAMIC: {"hidden", "out"},
    COND: {"linear"},
    DECODER: {"model.layers.0.self_attn", "lm_head"},
    RESNET: {"layer1.0.conv1", "layer4.1", "fc"},
}


def _onnx_file(name: str) -> Path:
    pytest.importorskip("onnxscript", reason="torch.onnx's dynamo exporter needs onnxscript (requirements-dev.txt)")
    try:
        return onnx_path(name)
    except ExportFailed as e:
        pytest.skip(str(e))


def test_each_onnx_export_opens_grouped_by_its_modules(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    for k, (name, modules) in enumerate(ONNX_MODULES.items()):
        doc = _opened(qtbot, window, _onnx_file(name))
        assert isinstance(doc, DocumentWidget) and window.current_tab() is doc, name
        assert doc.model.archive is not None and doc.model.archive.archive_format == "onnx"
        assert doc.model.program.dialect == "ONNX"
        groups = {g.path for g in doc.model.level.index.modules.walk()}
        assert modules <= groups, (name, sorted(groups))
        assert window.tabs.count() == k + 1
        if name == COND:  # the If's branches are entered as a cond's are
            (hop,) = [n for n in doc.model.program.graph.nodes if n.target == "onnx.If"]
            assert doc.model.subgraphs_of(hop.name) == [(hop.name, sg.name) for sg in hop.subgraphs]
            assert doc.model.enter_subgraph(hop.name, hop.subgraphs[0].name)
            assert [n.op_name for n in doc.model.level.graph.nodes if n.op is NodeOp.CALL_FUNCTION] == ["Sin", "Mul"]


def test_a_hostile_onnx_file_is_said_in_the_window_as_info_says_it(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                   tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    source = _onnx_file(CNN)
    for name, (build, said) in hostile_onnx.HOSTILE.items():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        path = build(source, folder / "model.onnx")
        assert info.main(argparse.Namespace(file=str(path), json=False)) == 1
        line = capsys.readouterr().err.strip()
        assert said in line and "\n" not in line
        assert _opened(qtbot, window, path) == line.removeprefix("pt2-viewer: "), name
    assert window.tabs.count() == 0
    assert isinstance(_opened(qtbot, window, source), DocumentWidget)  # the window is still usable
