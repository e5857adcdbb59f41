"""ONNX as a pipeline stage (core/diff/onnx_stage.py): a program | its `.onnx`, linked by the file's metadata: exact
(`from_node`) where the viewer made the export, else torch's exporter's own names as core/onnx/linking.py reads them;
a file that cannot be read is one line naming it."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.diff.chain import Chain
from pt2_viewer.core.diff.onnx_stage import BY_NAME, EXACT, onnx_provenance, read_onnx_pipeline
from pt2_viewer.core.model.program import NodeOp
from pt2_viewer.core.pt2.reader import read_archive
from tests.onnx_programs import CNN, onnx_path, source_program

pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript (pip install .[onnx])")


def test_the_viewers_export_links_every_source_op_exactly(tmp_path: Path) -> None:
    from pt2_viewer.core.deploy.onnx_lower import run
    from pt2_viewer.core.jobs.schemas.onnx_lower import OnnxLowerRequest

    pt2 = source_program(CNN)
    result = run(OnnxLowerRequest(program=str(pt2), output=str(tmp_path / "cnn.onnx")), tmp_path, lambda _e: None)
    assert result.ok, result.error
    source = read_archive(pt2)
    chain = read_onnx_pipeline(source, source.program(), str(tmp_path / "cnn.onnx"))
    assert isinstance(chain, Chain) and len(chain.stages) == 2
    mapping = onnx_provenance(chain.stages[0].program, chain.stages[1].program)
    assert {k.method for k in mapping.links} == {EXACT}
    for node, onnx_nodes in result.source_to_onnx().items():
        assert chain.counterparts(0, node)[1] == onnx_nodes


def test_torchs_own_export_links_by_the_exporters_names() -> None:
    source = read_archive(source_program(CNN))
    chain = read_onnx_pipeline(source, source.program(), str(onnx_path(CNN)))
    assert isinstance(chain, Chain)
    mapping = onnx_provenance(chain.stages[0].program, chain.stages[1].program)
    assert mapping.links and EXACT not in {k.method for k in mapping.links}
    by_name = {k.before for k in mapping.links if k.method == BY_NAME}
    assert {"relu", "relu_1", "mean", "linear"} <= by_name
    calls = [n.name for n in chain.stages[1].program.graph.nodes if n.op is NodeOp.CALL_FUNCTION]
    assert all(chain.counterparts(1, n)[0] for n in calls)  # every ONNX op reaches a source op


def test_a_missing_onnx_file_is_one_line_naming_it(tmp_path: Path) -> None:
    source = read_archive(source_program(CNN))
    message = read_onnx_pipeline(source, source.program(), str(tmp_path / "gone.onnx"))
    assert isinstance(message, str) and "gone.onnx" in message and "\n" not in message


def test_a_core_aten_stage_between_reaches_the_onnx_nodes_through_the_source(tmp_path: Path) -> None:
    """Source | core ATen | ONNX: a decomposition's node reaches the ONNX nodes of the source node it was made from."""
    from pt2_viewer.core.deploy.onnx_lower import run
    from pt2_viewer.core.jobs.schemas.onnx_lower import OnnxLowerRequest
    from tests.chain_programs import core_aten

    pt2 = source_program(CNN)
    result = run(OnnxLowerRequest(program=str(pt2), output=str(tmp_path / "cnn.onnx")), tmp_path, lambda _e: None)
    assert result.ok, result.error
    source = read_archive(pt2)
    chain = read_onnx_pipeline(source, source.program(), str(tmp_path / "cnn.onnx"), str(core_aten(pt2)))
    assert isinstance(chain, Chain) and [s.title.split(" ")[0] for s in chain.stages] == ["cnn_batchnorm.pt2", "core",
                                                                                          "ONNX"]
    expected = result.source_to_onnx()
    found = chain.counterparts(0, "batch_norm")
    assert found[1] and found[2] == expected["batch_norm"]  # the decomposed BatchNorm, and the Conv it was fused into
    for core_node in found[1]:
        assert chain.counterparts(1, core_node)[2] == expected["batch_norm"]
