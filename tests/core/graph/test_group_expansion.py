"""Expanding and collapsing module groups is the document model's, announced as an `Expansion` naming each group
whose state changed and its new state, so every view lays out again from the event (no view reaches into another's
expansion state). Without Qt, on the bundled example: a real two-layer transformer export."""
from __future__ import annotations

from pt2_viewer.core.graph.document import DocumentChange, DocumentEvent, Expansion, ExpansionCause
from pt2_viewer.core.graph.framing import Viewport
from pt2_viewer.core.graph.ids import group_item
from tests.core.graph.test_document_events import open_example


def expansions(heard: list[DocumentEvent]) -> list[Expansion]:
    return [e for e in heard if isinstance(e, Expansion)]


def test_toggling_a_group_announces_the_group_and_its_new_state() -> None:
    model, heard = open_example()
    assert model.is_expanded("blocks.0.attn")
    model.toggle_group("blocks.0.attn")
    assert heard == [Expansion((("blocks.0.attn", False),), ExpansionCause.GROUP)]
    assert not model.is_expanded("blocks.0.attn") and expansions(heard)[-1].keep_view
    assert model.level.scene.visible_item("linear_1") == group_item("blocks.0.attn")  # the model's scene changed
    model.toggle_group("blocks.0.attn")
    assert heard[-1] == Expansion((("blocks.0.attn", True),), ExpansionCause.GROUP)
    assert model.is_expanded("blocks.0.attn")


def test_expanding_a_group_opens_its_ancestors_and_says_so() -> None:
    model, heard = open_example()
    model.collapse_all()
    closed = expansions(heard)[-1]
    assert closed.cause is ExpansionCause.OVERVIEW and not closed.keep_view
    assert ("blocks.0", False) in closed.groups and all(not on for _, on in closed.groups)
    model.set_expanded("blocks.1.mlp", True)
    assert expansions(heard)[-1].groups == (("blocks.1", True), ("blocks.1.mlp", True))


def test_reveal_announces_only_when_something_was_hidden() -> None:
    model, heard = open_example()
    model.collapse_all()
    heard.clear()
    assert model.reveal("linear")
    (event,) = heard
    assert isinstance(event, Expansion) and event.cause is ExpansionCause.REVEAL and event.keep_view
    assert event.groups == (("blocks.0", True), ("blocks.0.attn", True), ("blocks.0.attn.qkv", True))
    assert model.level.scene.visible_item("linear") == "linear"
    assert not model.reveal("linear") and len(heard) == 1  # already visible: nothing to announce


def test_depth_and_expand_all_are_announced_as_a_fresh_view() -> None:
    model, heard = open_example()
    model.expand_to_depth(1)
    shallow = expansions(heard)[-1]
    assert shallow.cause is ExpansionCause.OVERVIEW and {p for p, _ in shallow.groups} >= {"blocks.0", "embed"}
    assert model.level.scene.expanded_depth() == 1
    model.expand_all()
    assert all(on for _, on in expansions(heard)[-1].groups) and model.level.scene.expanded_depth() == 4
    model.expand_all()  # nothing left to open: still announced (the view lays out again, as asked), with no groups
    assert expansions(heard)[-1] == Expansion((), ExpansionCause.OVERVIEW)


def test_settling_without_a_shallower_candidate_is_not_announced() -> None:
    model, heard = open_example()
    too_small = Viewport(300, 300, 0.82)  # the example opens flat: no shallower level to step up to
    assert model.level.scene.first_depths == [] and not model.settle(10_000, 10_000, too_small) and heard == []
    model.select("linear")
    assert heard == [DocumentChange.HIGHLIGHT]  # the other events are unchanged
