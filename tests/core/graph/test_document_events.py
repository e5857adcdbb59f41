"""The document model owns the selection, the search matches and the marked nodes, and tells its subscribers about
every change, so no view has to remember to repaint; highlight states are named (HighlightState), items are ids
(core/graph/ids.py). On the bundled example: a real two-layer transformer export with a cond."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.graph.document import DocumentChange, DocumentModel
from pt2_viewer.core.graph.highlight_state import HighlightState
from pt2_viewer.core.graph.ids import group_item, group_of, is_group, node_of
from pt2_viewer.core.pt2.reader import read_archive

EXAMPLE = Path(__file__).resolve().parents[3] / "resources" / "examples" / "example.pt2"


def open_example() -> tuple[DocumentModel, list[DocumentChange]]:
    archive = read_archive(EXAMPLE)
    model = DocumentModel(archive, archive.programs[0])
    heard: list[DocumentChange] = []
    model.subscribe(heard.append)
    return model, heard


def test_every_change_of_what_is_highlighted_is_announced() -> None:
    model, heard = open_example()
    model.select("linear")
    assert heard == [DocumentChange.HIGHLIGHT]
    h = model.highlight()
    assert h.nodes["linear"] is HighlightState.SELECTED
    assert h.nodes["layer_norm"] is HighlightState.NEIGHBOUR and h.nodes["split"] is HighlightState.NEIGHBOUR
    model.marked = ["split"]  # a panel marks a symbol's users: the match wins over the neighbour
    model.matches = ["layer_norm"]
    assert heard == [DocumentChange.HIGHLIGHT] * 3
    h = model.highlight()
    assert h.nodes["split"] is HighlightState.MATCH and h.nodes["layer_norm"] is HighlightState.MATCH


def test_level_changes_are_announced_and_clear_the_selection() -> None:
    model, heard = open_example()
    model.select("cond")
    model.matches = ["cond"]
    assert model.enter_subgraph("cond", "true_graph_0")
    assert heard[-1] is DocumentChange.LEVEL and model.selection is None and model.matches == []
    assert not model.enter_subgraph("no_such_node", "true_graph_0")
    assert heard[-1] is DocumentChange.LEVEL and len(heard) == 3  # a failed entry changes nothing
    model.go_to_level(0)
    assert heard[-1] is DocumentChange.LEVEL and len(model.levels) == 1


def test_unsubscribed_views_hear_nothing() -> None:
    model, heard = open_example()
    other: list[DocumentChange] = []
    stop = model.subscribe(other.append)
    stop()
    model.select("linear")
    assert heard == [DocumentChange.HIGHLIGHT] and other == []


def test_a_collapsed_group_is_highlighted_by_its_id() -> None:
    model, _ = open_example()
    scene = model.level.scene
    scene.collapse_all()
    shown = scene.visible_item("linear")
    assert is_group(shown) and group_of(shown) == "blocks.0" and shown == group_item("blocks.0")
    assert node_of(shown) is None and node_of("linear") == "linear" and group_of("linear") is None
    model.matches = ["linear"]
    assert model.highlight().groups == {"blocks.0": HighlightState.MATCH}
    model.select(shown)
    assert model.highlight().groups == {"blocks.0": HighlightState.MATCH}  # a group's match outranks its selection
    model.matches = []
    assert model.highlight().groups == {"blocks.0": HighlightState.SELECTED} and model.highlight().nodes == {}
