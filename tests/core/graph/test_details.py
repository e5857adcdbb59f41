"""core/graph/details.py on the panels' test program (tests/core/graph/test_readable.py exports it with torch and caches
it)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.graph.details import NodeLink, SourceLink, SubgraphLink, node_details
from pt2_viewer.core.graph.index import GraphIndex
from tests.core.graph.test_readable import MODEL_LINES, PanelsProgram, panels_program  # noqa: F401  (panels_program: fixture)

MODEL_FILE = str(Path(__file__).resolve().parent / "test_readable.py")


def test_linear_arguments_link_to_their_producers(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    d = node_details(program, program.graph, "linear", GraphIndex(program.graph))
    assert (d.title, d.kind) == ("aten.linear.default", "matmul")
    op = {r.label: r.text for r in d.section("Operator").rows}
    assert (op["operator"], op["overload"], op["namespace"]) == ("linear", "default", "aten")
    args = [(r.label, r.text, r.link, r.note) for r in d.section("Arguments").rows]
    assert args == [
        ("input", "x", NodeLink("x"), "f32[s77, 4]"),
        ("weight", "p_lin_weight", NodeLink("p_lin_weight"), "f32[3, 4]"),
        ("bias", "p_lin_bias", NodeLink("p_lin_bias"), "f32[3]"),
    ]
    [out] = d.section("Outputs").rows
    assert (out.label, out.text) == ("linear", "float32  [s77, 3]  stride (3, 1)")
    assert [(r.label, r.text, r.link, r.note) for r in d.section("Users").rows] == [
        ("batch_norm", "batch_norm", NodeLink("batch_norm"), "f32[s77, 3]")]
    users = node_details(program, program.graph, "cond", GraphIndex(program.graph)).section("Users").rows
    assert [(r.label, r.text) for r in users] == [("gt", "gt_1"), ("topk", "topk")]


def test_module_path_names_each_class(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    rows = node_details(program, program.graph, "batch_norm").section("Module").rows
    assert [(r.label, r.text) for r in rows] == [("(root)", "Panels"), ("bn", "BatchNorm1d")]
    assert rows[1].note == "torch.nn.modules.batchnorm.BatchNorm1d"


def test_stack_trace_puts_the_users_frame_first(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    rows = node_details(program, program.graph, "linear").section("Stack trace").rows
    first = rows[0]
    assert first.link.file == MODEL_FILE and not first.muted
    assert first.text == MODEL_LINES["lin_bn"]
    # the link points at the very line of the model's source that made the node
    assert Path(MODEL_FILE).read_text().splitlines()[first.link.line - 1].strip() == MODEL_LINES["lin_bn"]
    assert first.label == f"test_readable.py:{first.link.line}"
    library = rows[1:]
    assert library and all(r.muted for r in library)
    assert library[0].link.file.endswith("torch/nn/modules/linear.py")


def test_multi_output_op_reads_the_value_its_producer_made(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    d = node_details(program, program.graph, "topk")
    self_arg, k = d.section("Arguments").rows
    assert (self_arg.label, self_arg.text, self_arg.link) == ("self", "getitem  (output of cond)", NodeLink("cond"))
    assert (k.label, k.text, k.link) == ("k", "2", None)
    assert [(r.label, r.text) for r in d.section("Outputs").rows] == [
        ("getitem_1", "float32  [s77, 2]  stride (2, 1)"),
        ("getitem_2", "int64  [s77, 2]  stride (2, 1)"),
    ]


def test_cond_links_to_its_branches(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    d = node_details(program, program.graph, "cond")
    assert [(r.label, r.link) for r in d.section("Subgraphs").rows] == [
        ("true_fn", SubgraphLink("cond", "true_graph_0")),
        ("false_fn", SubgraphLink("cond", "false_graph_0")),
    ]
    args = {r.label: r.link for r in d.section("Arguments").rows}
    assert args["pred"] == NodeLink("gt") and args["operands[0]"] == NodeLink("batch_norm")
    user = d.section("Stack trace").rows[0]
    assert user.text == MODEL_LINES["cond"] and not user.muted
    # the get_attr node that stands for a branch opens it too
    owner = node_details(program, program.graph, "false_graph_0").section("Subgraph").rows
    assert owner[0].link == SubgraphLink("cond", "false_graph_0") and owner[1].link == NodeLink("cond")


def test_nodes_inside_a_branch(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    true_graph = program.graph.node_by_name["cond"].subgraphs[0]
    d = node_details(program, true_graph, "mul", GraphIndex(true_graph))
    assert [(r.label, r.text, r.link) for r in d.section("Arguments").rows] == [
        ("self", "sin", NodeLink("sin")), ("other", "2", None)]
    assert d.section("Stack trace").rows[0].text == MODEL_LINES["cond"]
    placeholder = node_details(program, true_graph, "batch_norm")
    assert placeholder.section("Input").rows[0].text == "input of subgraph 'true_graph_0'"


def test_placeholder_output_and_assert(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    weight = {r.label: r.text for r in node_details(program, program.graph, "p_lin_weight").section("Input").rows}
    assert weight == {"kind": "PARAMETER", "target": "lin.weight", "stored as": "weight_0"}
    returns = node_details(program, program.graph, "output").section("Returns").rows
    assert [(r.label, r.link) for r in returns] == [
        ("[0] USER_OUTPUT", NodeLink("topk")), ("[1] USER_OUTPUT", NodeLink("topk")),
        ("[2] USER_OUTPUT", NodeLink("nonzero"))]
    check = node_details(program, program.graph, "_assert_scalar_default_1")
    assert check.kind == "assert"
    cond_arg, msg = check.section("Arguments").rows
    assert (cond_arg.link, cond_arg.note) == (NodeLink("le"), "Sym(u0 <= 192)")
    assert msg.text == "\"Runtime assertion failed for expression u0 <= 192 on node 'le'\""
    assert check.section("Outputs") is None  # an assert produces nothing
    assert check.section("Stack trace").rows[0].text == MODEL_LINES["nonzero"]


def test_every_link_of_every_node_resolves(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    for path, graph in program.all_graphs():
        index = GraphIndex(graph)
        for node in graph.nodes:
            for link in node_details(program, graph, node.name, index).links():
                if isinstance(link, NodeLink):
                    assert link.node in graph.node_by_name, (path, node.name, link)
                elif isinstance(link, SubgraphLink):
                    assert link.subgraph in [s.name for s in graph.node_by_name[link.hop].subgraphs]
                else:
                    assert isinstance(link, SourceLink) and link.line > 0


def test_unknown_node_is_a_clear_error(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    with pytest.raises(KeyError, match="no node named 'nope' in program 'model'"):
        node_details(program, program.graph, "nope")


def test_program_properties_match_what_torch_says(panels_program: PanelsProgram) -> None:
    """Details with nothing selected: the program's properties, checked against torch's own ExportedProgram."""
    import torch

    from pt2_viewer.core.graph.properties import program_properties
    from pt2_viewer.core.graph.summary import human_count
    from pt2_viewer.core.model.expr import range_text
    from pt2_viewer.core.pt2.reader import read_archive

    archive = read_archive(panels_program.path)
    program = archive.programs[0]
    ep = torch.export.load(panels_program.path)
    props = program_properties(archive, program)
    assert props.kind == "program" and props.title == panels_program.path.name
    facts = {r.label: r.text for r in props.section("Program").rows}
    assert facts["torch"] == torch.__version__ and facts["dialect"] == ep.dialect
    inputs = [r for r in props.section("Inputs").rows if r.link is not None]
    assert [r.label for r in inputs] == list(ep.graph_signature.user_inputs)
    assert all(r.link == NodeLink(r.label) for r in inputs)  # a click selects the placeholder
    outputs = [r for r in props.section("Outputs").rows if r.link is not None]
    assert [r.label for r in outputs] == list(ep.graph_signature.user_outputs)
    params = sum(ep.state_dict[name].numel() for name in ep.graph_signature.parameters)
    weights = {r.label: r.text for r in props.section("Weights").rows}
    assert f"{len(ep.graph_signature.parameters)} tensors, {human_count(params)} values" in weights["parameters"]
    symbols = {r.label: r.text for r in props.section("Symbols").rows}
    assert symbols == {str(s): range_text(int(v.lower), None if v.upper.is_infinite else int(v.upper))
                       for s, v in ep.range_constraints.items()}


def test_tooltip_says_what_the_box_does_not(pt2_path) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.core.graph.details import node_tooltip
    from pt2_viewer.core.pt2.reader import read_archive

    program = read_archive(pt2_path("hf_tiny_bert")).program()
    index = GraphIndex(program.graph)
    linear = node_tooltip(program, program.graph, "linear", index)
    assert linear.splitlines() == ["linear  ·  aten.linear.default",
                                   "module: encoder.layer.0.attention.self.query (Linear)",
                                   "output: f32[2, s53, 32]", "1 user: view"]
    weight = node_tooltip(program, program.graph, "p_embeddings_word_embeddings_weight", index)
    assert weight.startswith("p_embeddings_word_embeddings_weight  ·  parameter embeddings.word_embeddings.weight")
    assert node_tooltip(program, program.graph, "no_such_node", index) == ""
