"""The report draws weights as the window does: a parameter or buffer with one user is a row of that user's box,
laid out taller for it, and no edge of its own (ResNet-18 from the zoo, laid out by the real layout child)."""
from __future__ import annotations

import pytest

from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.report.graph_data import graph_data
from tests.programs import ExportFailed
from tests.zoo.cache import program_by_id, zoo_path


def test_weights_are_rows_of_their_ops_box() -> None:
    try:
        archive = read_archive(zoo_path(program_by_id("resnet18")))
    except ExportFailed as e:
        pytest.fail(f"torch exported resnet18 before; now: {e.reason}")
    data = graph_data(archive.programs[0])
    nodes = data.nodes
    by_name = {n["name"]: i for i, n in enumerate(nodes)}
    conv, bn = nodes[by_name["conv2d"]], nodes[by_name["batch_norm"]]
    assert [nodes[r]["row"] for r in conv["rows"]] == ["weight"]
    assert [nodes[r]["row"] for r in bn["rows"]] == ["weight", "bias", "running_mean", "running_var",
                                                      "num_batches_tracked (unused)"]
    assert bn["h"] > conv["h"] > 38, "boxes are laid out taller for their rows"
    rows = {i for i, n in enumerate(nodes) if "host" in n}
    assert len(rows) == 122 and all(i in nodes[nodes[i]["host"]]["rows"] for i in rows)
    assert not any(a in rows for a, _ in data.edges), "no edge from a folded weight"
    placed = {it[1] for g in data.groups for it in g["items"] if it[0] == "n"}
    assert not placed & {nodes[i]["name"] for i in rows} and "conv2d" in placed


def test_a_module_of_one_op_is_that_ops_box_titled_with_the_module() -> None:
    """As in the window (core/graph/folding.py's leaves): `conv1: Conv2d` is the conv2d box, not a frame around it;
    the root lays the op out where the module's box would be, and the page never draws the module as a group."""
    try:
        archive = read_archive(zoo_path(program_by_id("resnet18")))
    except ExportFailed as e:
        pytest.fail(f"torch exported resnet18 before; now: {e.reason}")
    data = graph_data(archive.programs[0])
    groups, nodes = data.groups, data.nodes
    by_path = {g["path"]: k for k, g in enumerate(groups)}
    by_name = {n["name"]: n for n in nodes}
    conv = by_name["conv2d"]
    assert (conv["label"], conv["op"]) == ("conv1: Conv2d", "conv2d")
    assert groups[conv["group"]]["path"] == "conv1" and groups[by_path["conv1"]].get("leaf") is True
    root_items = groups[0]["items"]
    assert ["n", "conv2d"] in [it[:2] for it in root_items]
    assert ["g", by_path["conv1"]] not in [it[:2] for it in root_items]
    leaves = {k for k, g in enumerate(groups) if g.get("leaf")}
    assert not any(it[0] == "g" and it[1] in leaves for g in groups for it in g["items"]), "a leaf is never a group box"
    assert all(not groups[k]["items"] for k in leaves), "a leaf has no layout of its own"
    # every conv, batch norm and relu call of a BasicBlock is a leaf; the block itself stays a group
    block = by_path["layer1.0"]
    assert by_path["layer1.0.conv1"] in leaves and by_path["layer1.0.bn2"] in leaves and block not in leaves
    assert {n["label"] for n in nodes if n.get("op") and groups[n["group"]]["parent"] == block} >= {
        "conv1: Conv2d", "bn1: BatchNorm2d", "relu: ReLU", "conv2: Conv2d", "bn2: BatchNorm2d"}
    assert by_name["add_"].get("op") is None, "an op of the block itself keeps its own name"
    assert conv["w"] >= 7 * len("conv1: Conv2d"), "the box has room for the module's title"


def test_one_tensor_is_one_row_and_its_other_names_are_found_at_it() -> None:
    """The zoo's T5: `encoder.embed_tokens.weight` and `shared.weight` are one tensor, one row of the embedding's
    box, as the window draws it; the report's search finds `shared.weight` at that row (`same`)."""
    try:
        archive = read_archive(zoo_path(program_by_id("t5")))
    except ExportFailed as e:
        pytest.fail(f"torch exported t5 before; now: {e.reason}")
    nodes = graph_data(archive.programs[0]).nodes
    by_name = {n["name"]: i for i, n in enumerate(nodes)}
    row = nodes[by_name["p_shared_weight"]]["same"]
    assert nodes[row]["row"].startswith("weight = shared.weight (tied to ")
    box = nodes[nodes[row]["host"]]["rows"]
    assert row in box and by_name["p_shared_weight"] not in box
