"""Arrow-key steps and where a node sits (core/graph/navigation.py), and the trail of subgraph drills
(core/graph/history.py), on real programs."""
from __future__ import annotations

from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.graph.history import trail_of
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.navigation import enclosing_group, step
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"


def test_steps(pt2_path) -> None:  # type: ignore[no-untyped-def]
    index = GraphIndex(read_archive(pt2_path("dynamic_shapes")).program().graph)
    assert step(index, "matmul", "down") == "relu"
    assert step(index, "matmul", "up") == "x"
    assert step(index, "x", "up") is None
    # matmul and sym_size are x's users: siblings, in graph order, wrapping around
    assert {step(index, "matmul", "right"), step(index, "matmul", "left")} == {"sym_size_int_1"}
    assert step(index, "x", "right") == "y" and step(index, "y", "right") == "x"  # inputs are siblings
    assert step(index, "nope", "down") is None


def test_hubs_are_passed_over_and_groups_found(pt2_path) -> None:  # type: ignore[no-untyped-def]
    archive = read_archive(EXAMPLE)
    program = archive.program()
    index = GraphIndex(program.graph)
    hub = sorted(index.hubs)[0]
    user = next(u for u in index.users[hub] if len(index.producers[u]) > 1)
    assert step(index, user, "up") != hub
    graph = read_archive(pt2_path("attention_blocks")).program().graph
    index = GraphIndex(graph)
    linear = next(n for n in graph.nodes if n.op_name == "linear")
    group = enclosing_group(index, linear.name)
    assert group is not None and linear.name in group.nodes and group.module == linear.module_path
    assert enclosing_group(index, "x") is None


def test_trail_of_subgraph_drills() -> None:
    archive = read_archive(EXAMPLE)
    model = DocumentModel(archive, archive.program())
    assert trail_of(model.levels) == ()
    cond = next(n for n in model.program.graph.nodes if n.subgraphs)
    assert model.enter_subgraph(cond.name, cond.subgraphs[0].name)
    assert trail_of(model.levels) == ((cond.name, cond.subgraphs[0].name),)


def test_keys_pass_over_weights_folded_into_their_ops(pt2_path) -> None:  # type: ignore[no-untyped-def]
    """An embedding's first argument is its weight, drawn as a row of the embedding's box: Up goes to the indices it
    looks up, not into that row; with weights drawn as nodes (View > Show Weights as Nodes) Up reaches the weight."""
    archive = read_archive(pt2_path("hf_tiny_bert"))
    model = DocumentModel(archive, archive.program())
    level = model.level
    index, folded = level.index, level.scene.folding.host
    weight = "p_embeddings_word_embeddings_weight"
    assert index.producers["embedding"] == (weight, "input_ids") and folded[weight] == "embedding"
    assert step(index, "embedding", "up", folded) == "input_ids"
    assert step(index, "embedding_2", "up", folded) == "slice_1"
    assert step(index, "embedding", "up") == weight  # nothing folded: the weight is a node like any other
    # a row selected by click still walks: Down to its op, Left/Right among the graph's inputs that are drawn
    assert step(index, weight, "down", folded) == "embedding"
    sideways = {step(index, weight, "right", folded), step(index, weight, "left", folded)}
    assert sideways and not sideways & set(folded)
    # no step anywhere lands on a folded weight
    for node in level.graph.node_by_name:
        for direction in ("up", "down", "left", "right"):
            assert step(index, node, direction, folded) not in folded
