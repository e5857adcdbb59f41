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
