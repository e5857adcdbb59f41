"""Real ONNX exports (tests/onnx_programs.py) opened through the format registry, as the window, `info` and `render`
open them: ONNX ops by domain, initializers as the weight rows of the op that reads them, shapes with symbolic dims
by name, If branches reachable as subgraphs, grouped by module (torch's `name_scopes`, or the scopes in a TorchScript
export's node names), and what the exporter says of each node's source in its Details."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest

from pt2_viewer.core.formats import registry
from pt2_viewer.core.graph.details import node_details
from pt2_viewer.core.graph.folding import folding_of, weight_targets
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.model.program import InputKind, NodeOp, Program
from pt2_viewer.core.model.tensor_meta import SymDim
from pt2_viewer.core.onnx.provenance import fx_node_name, name_scopes
from tests.onnx_programs import CNN, COND, DECODER, DYNAMIC, RESNET, TRANSFORMER

OnnxFile = Callable[[str], Path]


def _program(path: Path) -> Program:
    assert registry.recognise(path) is registry.ONNX
    archive = registry.read(path)
    assert archive.archive_format == "onnx" and len(archive.programs) == 1 and not archive.warnings
    return archive.programs[0]


def _ops(program: Program) -> list:  # type: ignore[type-arg]
    return [n for n in program.graph.nodes if n.op is NodeOp.CALL_FUNCTION]


def _folding(program: Program):  # type: ignore[no-untyped-def]
    index = GraphIndex(program.graph, targets=weight_targets(program))
    return index, folding_of(index, index.modules.walk())


def test_the_batchnorm_cnn_reads_as_its_file_with_the_fusion_named(onnx_file: OnnxFile) -> None:
    path = onnx_file(CNN)
    model = onnx.load(str(path))
    program = _program(path)
    ops = _ops(program)
    assert [n.target for n in ops] == [f"onnx.{n.op_type}" for n in model.graph.node]
    assert [n.metadata["ONNX node"] for n in ops] == [n.name for n in model.graph.node]
    assert program.opset_version == {"ai.onnx": 20} and program.dialect == "ONNX"
    # every initializer is a weight of the signature but ReduceMean's axes, a small integer constant shown as the
    # literal it holds (as a .pt2's mean(x, [2, 3])); each conv's weight and bias are rows of that conv
    initializers = {t.name for t in model.graph.initializer}
    (mean,) = [n for n in ops if n.op_name == "ReduceMean"]
    axes = next(n.input[1] for n in model.graph.node if n.op_type == "ReduceMean")
    assert [(a.name, a.value) for a in mean.inputs][1] == ("axes", [2, 3])
    weights = {s.target for s in program.signature.inputs if s.kind is not InputKind.USER_INPUT}
    assert weights == initializers - {axes} and axes not in program.graph.values
    _, folding = _folding(program)
    convs = [n for n in ops if n.op_name == "Conv"]
    assert len(convs) == 2  # the two BatchNorms were fused into them
    for conv, module in zip(convs, ("conv1", "conv2")):
        assert folding.rows[conv.name] == [f"{module}.weight", f"{module}.bias"]
        assert conv.metadata["rewrite rules"] == "FuseBatchNormIntoConv"
        assert conv.metadata["FX node"].startswith("_native_batch_norm_legit_no_training")
    assert convs[0].module_path == "bn1" and convs[1].module_path == "bn2"  # the fused node keeps the BatchNorm's
    weight = program.graph.values["conv1.weight"]
    assert weight.meta is not None and weight.meta.short == "f32[8, 3, 3, 3]"
    # Details: the FX node, the module with its class, the user's line as a link, the rewrite rule
    details = node_details(program, program.graph, convs[0].name)
    module = details.section("Module")
    assert module is not None and [(r.label, r.text) for r in module.rows] == [("bn1", "BatchNorm2d")]
    trace = details.section("Stack trace")
    assert trace is not None and trace.rows[0].label.startswith("onnx_programs.py:")
    assert "self.bn1(self.conv1(x))" in trace.rows[0].text
    metadata = details.section("Metadata")
    assert metadata is not None
    rows = {r.label: r.text for r in metadata.rows}
    assert rows["rewrite rules"] == "FuseBatchNormIntoConv" and rows["domain"] == "ai.onnx" and rows["opset"] == "20"


def test_the_transformer_is_grouped_by_its_modules(onnx_file: OnnxFile) -> None:
    program = _program(onnx_file(TRANSFORMER))
    index, folding = _folding(program)
    paths = {g.path for g in index.modules.walk()}
    assert {"layers.0", "layers.0.self_attn", "layers.1.linear2", "layers.1.norm2"} <= paths
    layer = next(g for g in index.modules.walk() if g.path == "layers.0")
    assert layer.class_name == "torch.nn.modules.transformer.TransformerEncoderLayer"
    with_fx = [n for n in _ops(program) if "FX node" in n.metadata]
    assert len(with_fx) == len(_ops(program))  # the dynamo exporter names every node's FX node
    # each weight read by one op is a row of that op (one read by several would stay a node)
    weights = {s.name for s in program.signature.inputs if s.kind is not InputKind.USER_INPUT}
    for name in weights:
        users = index.users.get(name, [])
        assert folding.host.get(name) == (users[0] if len(users) == 1 else None), name
    norms = [n for n in _ops(program) if n.op_name == "LayerNormalization"]
    assert len(norms) == 4 and all(len(folding.rows[n.name]) == 2 for n in norms)  # weight and bias rows


def test_a_dynamic_batch_is_a_symbol_by_its_name(onnx_file: OnnxFile) -> None:
    program = _program(onnx_file(DYNAMIC))
    x = program.graph.values["x"].meta
    assert x is not None and x.short == "f32[batch, 16]" and isinstance(x.sizes[0], SymDim)
    # a dim is a size, never negative: [0, ∞] in the Symbols tab, as a .pt2's, not [-∞, ∞]
    assert [(s.name, s.min, s.max, s.sources) for s in program.symbols] == [("batch", 0, None, ["x.shape[0]"])]
    out = program.graph.values[program.graph.outputs[0] or ""].meta
    assert out is not None and out.shape_text == "[batch, 4]"


def test_if_branches_are_subgraphs_reached_as_conds_are(onnx_file: OnnxFile) -> None:
    program = _program(onnx_file(COND))
    (if_node,) = [n for n in _ops(program) if n.op_name == "If"]
    assert [sg.name for sg in if_node.subgraphs] == ["true_graph_0", "false_graph_0"]  # the branches' own names
    for sg in if_node.subgraphs:  # a get_attr node stands for each branch, as for a .pt2's cond
        assert program.graph.node_by_name[sg.name].op is NodeOp.GET_ATTR
    then, other = if_node.subgraphs
    assert [n.op_name for n in _ops_of(then)] == ["Sin", "Mul"] and [n.op_name for n in _ops_of(other)] == ["Cos"]
    # a branch reads the If's operand from the outer graph: a placeholder of the branch
    assert [n.name for n in then.nodes if n.op is NodeOp.PLACEHOLDER][0] == "linear"
    assert [path for path, _ in program.all_graphs()] == ["", f"{if_node.name}/{then.name}",
                                                          f"{if_node.name}/{other.name}"]
    details = node_details(program, program.graph, if_node.name)
    subgraphs = details.section("Subgraphs")
    assert subgraphs is not None and [r.text for r in subgraphs.rows] == [then.name, other.name]


def _ops_of(graph):  # type: ignore[no-untyped-def]
    return [n for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION]


def test_a_torchscript_resnet_is_grouped_by_the_scopes_in_its_node_names(onnx_file: OnnxFile) -> None:
    path = onnx_file(RESNET)
    program = _program(path)
    ops = _ops(program)
    assert not any("FX node" in n.metadata or "stack_trace" in n.metadata for n in ops)  # no metadata, no links
    index = GraphIndex(program.graph, targets=weight_targets(program))
    paths = {g.path for g in index.modules.walk()}
    assert {"layer1", "layer1.0", "layer1.0.conv1", "layer4.1.conv2", "fc"} <= paths
    first = next(n for n in ops if n.metadata["ONNX node"] == "/layer1/layer1.0/conv1/Conv")
    assert first.module_path == "layer1.0.conv1" and first.name == "Conv_1"
    # a module of one op is drawn as that op's box under the module's title; the file names no class, so the title
    # names the op (`conv1: Conv`, as a .pt2's `conv1: Conv2d`), not the bare scope `conv1`
    titles = _box_titles(program)
    assert titles[first.name] == "conv1: Conv" and titles["Add"] == ""  # the block's Add: a node of layer1.0 itself
    assert _box_titles(_program(onnx_file(CNN)))["node_Conv_17"] == "bn1: BatchNorm2d"  # a class named: the module's


def _box_titles(program: Program) -> dict[str, str]:
    """Each node box's module title, every module expanded, as the graph view draws it."""
    from pt2_viewer.core.graph.scene import SceneModel
    from pt2_viewer.core.layout.driver import lay_out_all
    from pt2_viewer.core.layout.engine import layout

    scene = SceneModel(program.graph, GraphIndex(program.graph, targets=weight_targets(program)))
    scene.expand_all()
    lay_out_all(scene, layout)
    return {box.node: box.title for box in scene.compose().nodes if box.kind == "node"}


def test_the_decoder_opens_grouped_with_its_fx_nodes(onnx_file: OnnxFile) -> None:
    program = _program(onnx_file(DECODER))
    ops = _ops(program)
    assert len([n for n in ops if "FX node" in n.metadata]) >= 0.95 * len(ops)
    paths = {g.path for g in GraphIndex(program.graph).modules.walk()}
    assert {"model.layers.0.self_attn", "model.layers.1.mlp", "lm_head"} <= paths
    ids = program.graph.values["input_ids"].meta
    assert ids is not None and ids.short.startswith("i64[1, ")  # the sequence is a symbol by its name
    assert isinstance(ids.sizes[1], SymDim)


@pytest.mark.parametrize(("printed", "name"), [
    ("%conv2d : [num_users=1] = call_function[target=torch.ops.aten.conv2d.default](args = (%x,), kwargs = {})",
     "conv2d"),
    ("%_native_batch_norm_legit_no_training_2 : [num_users=1] = call_function[...]",
     "_native_batch_norm_legit_no_training_2"),
    ("not a printed node", None),
])
def test_the_fx_node_name_is_parsed_out_of_its_printed_form(printed: str, name: str | None) -> None:
    assert fx_node_name(printed) == name


def test_scopes_in_node_names_are_module_paths() -> None:
    assert [s.path for s in name_scopes("/layer1/layer1.0/conv1/Conv")] == ["layer1", "layer1.0", "layer1.0.conv1"]
    assert [s.path for s in name_scopes("/encoder/block/0/attn/MatMul")] == [
        "encoder", "encoder.block", "encoder.block.0", "encoder.block.0.attn"]
    assert name_scopes("/Relu") == () and name_scopes("Conv_3") == ()


def test_a_loop_body_and_a_scan_body_are_subgraphs_with_their_outer_values(tmp_path: Path) -> None:
    """Any `.onnx`, not only torch's: a Loop (made with onnx's helper) whose body reads a value of the outer graph,
    and a Scan; each body is a subgraph, its formal inputs and the outer value its placeholders."""
    from onnx import TensorProto, helper

    f32 = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa: E731
    b8 = lambda name: helper.make_tensor_value_info(name, TensorProto.BOOL, [])  # noqa: E731
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),
         helper.make_node("Identity", ["keep"], ["keep_out"])],
        "loop_body", [helper.make_tensor_value_info("i", TensorProto.INT64, []), b8("keep"), f32("acc_in", ["n"])],
        [b8("keep_out"), f32("acc_out", ["n"])])
    scan_body = helper.make_graph([helper.make_node("Mul", ["s_in", "row"], ["s_out"])], "scan_body",
                                  [f32("s_in", [3]), f32("row", [3])], [f32("s_out", [3])])
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["step"], name="/encoder/Neg"),
         helper.make_node("Loop", ["trips", "", "x"], ["looped"], body=body, name="/encoder/Loop"),
         helper.make_node("Scan", ["s0", "rows"], ["scanned"], body=scan_body, num_scan_inputs=1, name="scan")],
        "loops", [f32("x", ["n"]), helper.make_tensor_value_info("trips", TensorProto.INT64, []), f32("s0", [3]),
                  f32("rows", ["steps", 3])],
        [f32("looped", ["n"]), f32("scanned", [3])])
    path = tmp_path / "loops.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    program = _program(path)
    loop = program.graph.node_by_name["Loop"]
    (sub,) = loop.subgraphs
    assert sub.name == "loop_body" and program.graph.node_by_name["loop_body"].op is NodeOp.GET_ATTR
    assert [a.name for a in loop.inputs] == ["M", "cond", "v_initial", "body"] and loop.inputs[1].value is None
    placeholders = [n.name for n in sub.nodes if n.op is NodeOp.PLACEHOLDER]
    assert placeholders == ["i", "keep", "acc_in", "step"]  # the body's inputs, then `step` from the outer graph
    assert loop.module_path == "encoder" and program.graph.node_by_name["Neg"].module_path == "encoder"
    (scan_sub,) = program.graph.node_by_name["scan"].subgraphs
    assert [n.op_name for n in scan_sub.nodes if n.op is NodeOp.CALL_FUNCTION] == ["Mul"]
    rows = program.graph.values["rows"].meta
    assert rows is not None and rows.short == "f32[steps, 3]"
