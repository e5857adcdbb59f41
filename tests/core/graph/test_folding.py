"""Weights folded into the ops that use them, and modules of one op drawn as that op's box, on real exports:
ResNet-18 from the zoo (eval mode: BatchNorm's `num_batches_tracked` feeds nothing) and a model whose Linear is
called twice (its weights have two users each). Laid out with real Graphviz."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.graph.document import DocumentChange, DocumentModel
from pt2_viewer.core.graph.highlight_state import HighlightState
from pt2_viewer.core.graph.ids import group_item
from pt2_viewer.core.graph.scene import NODE_H
from pt2_viewer.core.layout.driver import lay_out_all
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.model.program import NodeOp
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import ExportFailed
from tests.zoo.cache import program_by_id, zoo_path


def open_doc(path: Path) -> DocumentModel:
    archive = read_archive(path)
    return DocumentModel(archive, archive.programs[0])


@pytest.fixture(scope="module")
def resnet() -> DocumentModel:
    try:
        return open_doc(zoo_path(program_by_id("resnet18")))
    except ExportFailed as e:
        pytest.fail(f"torch exported resnet18 before; now: {e.reason}")


def composed_flat(doc: DocumentModel):  # type: ignore[no-untyped-def]
    scene = doc.level.scene
    scene.expand_all()
    lay_out_all(scene, layout)
    return scene.compose()


def test_single_user_weights_are_rows_of_their_op(resnet: DocumentModel) -> None:
    composed = composed_flat(resnet)
    index = resnet.level.index
    boxes = {n.node: n for n in composed.nodes}
    rows = [n for n in composed.nodes if n.kind == "weight_row"]
    weights = set(index.targets)
    assert len(weights) == 122 and {r.node for r in rows} == weights, "every parameter and buffer is a row"
    for r in rows:
        host = boxes[r.host]
        assert host.kind == "node" and index.users[r.node] in ((r.host,), ())
        assert host.x < r.x and r.x + r.w < host.x + host.w and host.y + NODE_H <= r.y and r.y + r.h <= host.y + host.h
    # conv1's box: its weight as a row named as the module calls it; bn1's: five rows, the unused one marked
    conv = boxes["conv2d"]
    assert (conv.title, conv.module) == ("conv1: Conv2d", "conv1")
    assert [(r.title, r.unused) for r in rows if r.host == "conv2d"] == [("weight", False)]
    assert [(r.title, r.unused) for r in rows if r.host == "batch_norm"] == [
        ("weight", False), ("bias", False), ("running_mean", False), ("running_var", False),
        ("num_batches_tracked", True)]
    # no edge comes from a folded weight; ops still connect
    assert not {e.src for e in composed.edges} & weights
    assert ("conv2d", "batch_norm") in {(e.src, e.dst) for e in composed.edges}


def test_a_module_of_one_op_is_that_ops_box(resnet: DocumentModel) -> None:
    composed = composed_flat(resnet)
    scene = resnet.level.scene
    frames = {g.path for g in composed.groups}
    assert {"conv1", "bn1", "relu", "fc", "layer1.0.conv1"} <= set(scene.leaves)
    assert not frames & set(scene.leaves), "no frame around one box"
    assert {"layer1", "layer1.0", "layer4.1"} <= frames
    leaf = {n.module: n for n in composed.nodes if n.module}
    assert leaf["layer1.0.bn2"].title == "bn2: BatchNorm2d" and leaf["layer1.0.bn2"].group == "layer1.0"
    # a leaf is never collapsed: its op is visible as soon as its parent is
    scene.collapse_all()
    scene.set_expanded("layer1", True)
    scene.set_expanded("layer1.0", True)
    assert scene.visible_item("conv2d_1") == "conv2d_1"  # layer1.0.conv1's op
    assert scene.visible_item("p_layer1_0_conv1_weight") == "p_layer1_0_conv1_weight"  # its row
    assert scene.visible_item("p_layer2_0_conv1_weight") == group_item("layer2")


def test_weights_as_nodes_brings_every_weight_box_back(resnet: DocumentModel) -> None:
    seen: list[DocumentChange] = []
    end = resnet.subscribe(seen.append)
    try:
        resnet.set_weights_as_nodes(True)
        composed = composed_flat(resnet)
        assert seen == [DocumentChange.DRAWING]
        assert all(n.kind == "node" for n in composed.nodes) and not resnet.level.scene.leaves
        assert {n.node for n in composed.nodes} == {n.name for n in resnet.program.graph.nodes}
        assert ("p_conv1_weight", "conv2d") in {(e.src, e.dst) for e in composed.edges}
        assert "conv1" in {g.path for g in composed.groups}
    finally:
        resnet.set_weights_as_nodes(False)
        end()
    assert any(n.kind == "weight_row" for n in composed_flat(resnet).nodes)


def test_a_folded_weight_is_still_selected_found_and_highlighted(resnet: DocumentModel) -> None:
    composed_flat(resnet)
    resnet.select("p_conv1_weight")
    h = resnet.highlight()
    assert h.nodes["p_conv1_weight"] is HighlightState.SELECTED and h.nodes["conv2d"] is HighlightState.NEIGHBOUR
    resnet.select("batch_norm")
    h = resnet.highlight()
    assert h.nodes["b_bn1_running_mean"] is HighlightState.NEIGHBOUR
    assert [hit.node for hit in resnet.level.index.search("running_var")][:1] == ["b_bn1_running_var"]
    resnet.select(None)


def test_weights_with_several_users_stay_nodes(pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_doc(pt2_path("repeated_calls"))
    composed = composed_flat(doc)
    index = doc.level.index
    shared = [w for w in index.targets if len(index.users[w]) > 1]
    assert shared, "fc1 is called twice: its weight and bias feed two linears"
    kinds = {n.node: n.kind for n in composed.nodes}
    assert all(kinds[w] == "node" for w in shared)
    assert all((w, u) in {(e.src, e.dst) for e in composed.edges} for w in shared for u in index.users[w])


def test_first_view_opens_at_a_module_level_of_eight_items_or_more(resnet: DocumentModel) -> None:
    scene = resnet.level.scene
    scene.expand_initial()
    counts = scene.level_item_counts()
    assert counts[0] >= 8  # ResNet-18's top level: x, conv1, bn1, relu, maxpool, layer1-4, avgpool, flatten, fc ...
    assert scene.first_depths[-1] == 1 and scene.first_depths == sorted(scene.first_depths, reverse=True)
    assert scene.expanded_depth() == scene.first_depths[0]
    while scene.fall_back():
        pass
    assert scene.expanded == {""}
    lay_out_all(scene, layout)
    shown = scene.compose()
    ops = [n for n in shown.nodes if n.kind == "node"]
    assert len(ops) + len(shown.groups) == counts[0]
    assert all(resnet.program.graph.node_by_name[n.node].op is not NodeOp.PLACEHOLDER or n.node == "x" for n in ops)
