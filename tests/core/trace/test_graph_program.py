"""A compiled graph of a real torch.compile trace opens as the graph view's program (issue 40 §2): every graph of
every compile opens; Dynamo's graph of the zoo's CNN and transformer has its exported program's top-level module
groups, its weights as rows and shapes on its nodes; source lines are the user's; a backward graph opens."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.graph.folding import weight_targets
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.scene import SceneModel
from pt2_viewer.core.model.program import InputKind, NodeOp, Program
from pt2_viewer.core.model.tensor_meta import SymDim
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.graph_pieces import class_in_pieces
from pt2_viewer.core.trace.graph_program import graph_artifacts, program_from_artifact
from pt2_viewer.core.trace.graph_text import parse_graph_text
from pt2_viewer.core.trace.model import Artifact, Trace
from pt2_viewer.core.trace.reader import read_trace
from tests.trace_graph_programs import zoo_trace
from tests.trace_programs import compile_trace, ranks_trace, warm_trace

WEIGHTS = (InputKind.PARAMETER, InputKind.BUFFER)


@pytest.fixture(scope="module")
def trace() -> Trace:
    return read_trace(compile_trace())


@pytest.fixture(scope="module")
def zoo() -> Trace:
    return read_trace(zoo_trace())


def _scene(program: Program) -> SceneModel:
    return SceneModel(program.graph, GraphIndex(program.graph, targets=weight_targets(program)))


def _top_groups(program: Program) -> list[str]:
    return [g.path for g in GraphIndex(program.graph, targets=weight_targets(program)).modules.children]


def _shaped(program: Program) -> float:
    nodes = [n for n in program.graph.nodes if n.op is not NodeOp.OUTPUT]
    values = program.graph.values
    typed = [n for n in nodes if any(o and (values[o].meta is not None or values[o].expr is not None)
                                     for o in n.outputs)]
    return len(typed) / len(nodes)


def test_every_graph_of_every_compile_opens(trace, zoo):
    opened = set()
    shaped: dict[str, int] = {}
    for t in (trace, zoo, read_trace(warm_trace()), read_trace(ranks_trace())):
        for compile_ in t.compiles:
            for name, index in graph_artifacts(compile_):
                program = program_from_artifact(t, str(compile_.id), name, index, compile_.rank)
                assert ("cache hit" in program.metadata) == compile_.cache_hit
                assert program.metadata.get("rank") == (None if compile_.rank is None else str(compile_.rank))
                graph = program.graph
                names = {n.name for n in graph.nodes}
                assert len(names) == len(graph.nodes) and graph.nodes[-1].op is NodeOp.OUTPUT
                assert all(e.src in names and e.dst in names and e.value in graph.values for e in graph.edges)
                assert all(o in graph.values for n in graph.nodes for o in n.outputs if o)
                produced = {o for n in graph.nodes for o in n.outputs if o}
                assert all(r in produced for n in graph.nodes for r in n.input_refs()), (compile_.id, name)
                assert _scene(program).counts[""] == len(graph.nodes)  # the graph view's scene takes it whole
                opened.add(name)
                shaped[name] = shaped.get(name, 0) + _same_in_pieces_and_whole(compile_.artifacts, name, index)
    # the zoo's layers repeat statements: hundreds are read by a shape learnt from an earlier line, as parsed
    assert shaped["dynamo_output_graph"] > 50 and shaped["aot_inference_graph"] > 300, shaped
    assert opened >= {"dynamo_output_graph", "aot_forward_graph", "aot_backward_graph", "aot_joint_graph",
                      "aot_inference_graph", "inductor_post_grad_graph"}


def _same_in_pieces_and_whole(artifacts: list[Artifact], name: str, index: int) -> int:
    """A graph read a piece at a time (core/trace/graph_pieces.py), its lines of a statement's shape seen before read
    by that shape (core/trace/graph_shapes.py), is the graph read whole, and was read in pieces. Returns how many
    statements were read by a shape."""
    text = [a for a in artifacts if a.name == name][index].text()
    assert class_in_pieces(text.splitlines()) is not None
    pieces, whole = parse_graph_text(text, name), parse_graph_text(text, name, in_pieces=False)
    assert [(n.name, n.op, n.target, n.outputs, n.inputs, n.metadata) for n in pieces.nodes] == \
        [(n.name, n.op, n.target, n.outputs, n.inputs, n.metadata) for n in whole.nodes]
    assert (pieces.annotations, pieces.input_notes, pieces.output_notes) == \
        (whole.annotations, whole.input_notes, whole.output_notes)
    assert whole.shaped == 0
    return pieces.shaped


@pytest.mark.parametrize("model, compile_id", [("mobilenet_v3_small", "[0/0]"), ("nn_transformer", "[1/0]")])
def test_dynamo_graph_reads_like_its_exported_program(zoo, zoo_program, model, compile_id):
    program = program_from_artifact(zoo, compile_id, "dynamo")
    exported = read_archive(zoo_program(model)).programs[0]
    assert _top_groups(program) == _top_groups(exported)
    ours = {g.path: g for g in GraphIndex(program.graph, targets=weight_targets(program)).modules.walk()}
    theirs = {g.path for g in GraphIndex(exported.graph, targets=weight_targets(exported)).modules.walk()}
    invented = [p for p in set(ours) - theirs  # but a ModuleList, which export records no scope for
                if not all(c.path.rpartition(".")[2].isdigit() for c in ours[p].children)]
    assert not invented and len(set(ours) & theirs) > 0.4 * len(theirs)
    weights = {s.target for s in program.signature.inputs if s.kind in WEIGHTS}
    exported_weights = {s.target for s in exported.signature.inputs if s.kind in WEIGHTS}
    assert weights and weights <= exported_weights
    assert all(w.endswith("num_batches_tracked") for w in exported_weights - weights)  # eval BN reads none
    folding = _scene(program).folding
    rows = {s.name for s in program.signature.inputs if s.kind in WEIGHTS}
    assert rows == set(folding.host)  # every weight a row of the op that reads it
    ops = {program.graph.node_by_name[h].op for h in folding.host.values()}
    assert ops == {NodeOp.CALL_FUNCTION}
    assert _shaped(program) >= 0.95


def test_weights_sit_in_their_modules_and_ops_in_the_modules_their_line_calls(zoo):
    program = program_from_artifact(zoo, "[0/0]", "dynamo_output_graph")
    index = GraphIndex(program.graph, targets=weight_targets(program))
    by_path = {g.path: g for g in index.modules.walk()}
    conv = by_path["features.0.0"]
    assert [program.graph.node_by_name[n].target for n in conv.nodes if not n.startswith("L_")] == ["torch.conv2d"]
    pool = by_path["avgpool"]  # `x = self.avgpool(x)` reads no weight: placed by its line
    assert [program.graph.node_by_name[n].target for n in pool.nodes] == \
        ["torch.nn.functional.adaptive_avg_pool2d"]
    squeeze = by_path["features.1.block.1.avgpool"]  # inside SqueezeExcitation's `_scale`
    assert len(squeeze.nodes) == 1


def test_source_lines_point_at_the_users_file(trace):
    script = compile_trace().parent / "compile_script.py"
    lines = script.read_text(encoding="utf-8").splitlines()
    forward = {i for i, text in enumerate(lines, start=1) if "self.conv(x)" in text or "self.fc(" in text}
    assert len(forward) == 2  # SmallCNN.forward's two lines
    for name in ("dynamo_output_graph", "aot_forward_graph", "aot_backward_graph"):
        program = program_from_artifact(trace, "[0/0]", name)
        ops = [n for n in program.graph.nodes if n.op is NodeOp.CALL_FUNCTION]
        framed = [n for n in ops if n.user_frame is not None]
        assert len(framed) >= 0.9 * len(ops), name
        assert {Path(n.user_frame.file) for n in framed} == {script}, name
        assert {n.user_frame.line for n in framed} <= forward, name
        assert all(n.user_frame.function == "forward" and n.user_frame.code for n in framed)


def test_a_backward_graph_opens_with_its_weights_named(trace, zoo):
    backward = program_from_artifact(trace, "[0/0]", "aot_backward")
    targets = {n.target.split(".")[3] for n in backward.graph.nodes if n.target.startswith("torch.ops.aten.")}
    assert "convolution_backward" in targets
    conv = next(n for n in backward.graph.nodes if n.target == "torch.ops.aten.convolution_backward.default")
    assert len([o for o in conv.outputs if o]) == 2  # torch's getitem_3, getitem_4: outputs of one node
    weights = {s.name: s.target for s in backward.signature.inputs if s.kind in WEIGHTS}
    assert weights == {"primals_1": "conv.weight", "primals_4": "fc.weight"}  # by `# PlainAOTInput(idx=N)`
    compiled = program_from_artifact(trace, "[0/0]", "post_grad", 1)  # Inductor's, of the backward: by position
    assert sorted(s.target for s in compiled.signature.inputs if s.kind in WEIGHTS) == ["conv.weight", "fc.weight"]
    assert _top_groups(compiled) == _top_groups(backward)
    big = program_from_artifact(zoo, "[0/0]", "aot_backward_graph")
    assert set(_top_groups(big)) == {"features", "avgpool", "classifier"}
    assert _shaped(big) >= 0.95


def test_a_conds_branches_are_its_subgraphs(zoo):
    for name in ("dynamo_output_graph", "aot_inference_graph"):
        program = program_from_artifact(zoo, "[2/0]", name)
        cond = next(n for n in program.graph.nodes if n.target == "torch.ops.higher_order.cond")
        branches = {sg.name: sg for sg in cond.subgraphs}
        assert len(branches) == 2, name
        ops = {n.target.rsplit(".", 1)[-1] if "Tensor" in n.target else n.target.split(".")[3]
               for sg in branches.values() for n in sg.nodes if n.op is NodeOp.CALL_FUNCTION}
        assert ops == {"sin", "cos"}, (name, ops)
        assert all(graph.nodes[-1].op is NodeOp.OUTPUT for graph in branches.values())
        assert [o for o in cond.outputs if o]  # its `getitem`: one of its outputs, typed
        assert all(program.graph.values[o].meta is not None for o in cond.outputs if o)


def test_symbols_stay_names(trace):
    compile_ = next(c for c in trace.compiles if (a := c.artifact("dynamo_output_graph")) and "Sym(" in a.text())
    program = program_from_artifact(trace, str(compile_.id), "dynamo_output_graph")
    symbol = next(n for n in program.graph.nodes if n.op is NodeOp.PLACEHOLDER and program.graph.values[
        n.outputs[0] or ""].kind == "sym_int")
    name = symbol.outputs[0]
    sizes = [d for v in program.graph.values.values() if v.meta is not None for d in v.meta.sizes]
    assert any(isinstance(d, SymDim) and d.text == name for d in sizes)
    assert [s.name for s in program.symbols] == [name] and program.symbols[0].sources == ["L_x_.shape[0]"]


def test_what_it_cannot_read_is_one_line(trace):
    compiled = next(c for c in trace.compiles if c.artifact("inductor_output_code") and not c.artifact(
        "aot_joint_graph"))
    for args in ((str(compiled.id), "inductor_code"), ("[99/0]", "dynamo"), (str(compiled.id), "aot_joint_graph"),
                 (str(compiled.id), "dynamo", 3)):
        with pytest.raises(TraceError) as error:
            program_from_artifact(trace, *args)  # type: ignore[arg-type]
        assert "\n" not in str(error.value) and str(error.value).startswith(args[0])
        if args[1] == "inductor_code":
            assert "Inductor's output code is Python source, not a graph" in str(error.value)
    ranks = read_trace(ranks_trace())  # rank 1 recompiled, rank 0 did not
    assert program_from_artifact(ranks, "[0/1]", "dynamo", rank=1).metadata["rank"] == "1"
    with pytest.raises(TraceError, match=r"^\[0/1\]: no such compile id in this trace on rank 0"):
        program_from_artifact(ranks, "[0/1]", "dynamo", rank=0)
    for text in ("def f(:\n", "x = 1\n", "class G(torch.nn.Module):\n    pass\n"):
        with pytest.raises(TraceError):
            parse_graph_text(text, "[0/0] dynamo_output_graph")


def test_a_line_of_a_known_shape_that_calls_a_method_is_read_as_parsed():
    # `t.flatten(a)` is learnt while `t` names no value (a function `t.flatten`); once `t` is a value, a line of that
    # shape is a method call of it (`torch.Tensor.flatten`), as the text read whole says
    line = '        c{}: "f32[2][1]cpu" = t.flatten(a1, 1)\n'
    text = ("class GraphModule(torch.nn.Module):\n"
            '    def forward(self, L_x_: "f32[2][1]cpu"):\n'
            '        a1: "f32[2][1]cpu" = torch.relu(L_x_)\n'
            + "".join(line.format(i) for i in range(1, 25))
            + '        t: "f32[2][1]cpu" = torch.relu(a1)\n'
            + line.format(25) + line.format(26)
            + "        return (c26,)\n")
    pieces, whole = parse_graph_text(text, "test"), parse_graph_text(text, "test", in_pieces=False)
    assert pieces.shaped == 5  # c20 to c24, after the first run of lines parsed; c25 and c26 as `ast` parses them
    assert [(n.name, n.target, n.inputs) for n in pieces.nodes] == [(n.name, n.target, n.inputs) for n in whole.nodes]
    assert [n.target for n in pieces.nodes if n.name.startswith("c")] == \
        ["t.flatten"] * 24 + ["torch.Tensor.flatten"] * 2


def test_nothing_in_the_text_is_run(tmp_path):
    marker = tmp_path / "ran"
    text = ("class GraphModule(torch.nn.Module):\n"
            '    def forward(self, L_x_: "f32[2][1]cpu"):\n'
            "        l_x_ = L_x_\n"
            f"        y: \"f32[2][1]cpu\" = __import__('pathlib').Path({str(marker)!r}).touch()\n"
            "        return (y,)\n")
    graph = parse_graph_text(text, "test")
    assert not marker.exists()
    call = next(n for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION)
    assert "touch" in call.target and graph.annotations["y"] == "f32[2][1]cpu"
