"""The first view and Fit, decided by core/graph/framing.py, tested without a window: on real exports (GPT-2 and
ResNet-18 exported by this machine's torch, tests/diff_programs.py; the bundled example) laid out by real Graphviz,
with the viewport a window of 1400x900 or 1280x800 gives the graph."""
from __future__ import annotations

import pytest

from pt2_viewer.core.graph import framing
from pt2_viewer.core.graph.document import DocumentModel, Expansion, ExpansionCause
from pt2_viewer.core.graph.drawing import SceneLayout
from pt2_viewer.core.graph.find_pattern import find_label, find_status, search
from pt2_viewer.core.graph.framing import Framing, Settle, Viewport
from pt2_viewer.core.graph.history import History, Place
from pt2_viewer.core.layout.driver import lay_out_all
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.pt2.reader import read_archive
from tests.core.graph.test_document_events import EXAMPLE
from tests.diff_programs import diff_program_path

READABLE = 0.82  # what the view's fonts give (app/graph/items.readable_scale): 9 px over 11 px labels
# the graph's part of a 1400x900 and a 1280x800 window (toolbar, side panel and status bar taken off)
VIEWPORTS = {"1400x900": Viewport(860, 760, READABLE), "1280x800": Viewport(760, 660, READABLE)}


def open_model(path) -> DocumentModel:  # type: ignore[no-untyped-def]
    archive = read_archive(path)
    return DocumentModel(archive, archive.programs[0])


@pytest.fixture(scope="module")
def gpt2() -> DocumentModel:
    return open_model(diff_program_path("gpt2"))


@pytest.fixture(scope="module")
def resnet18() -> DocumentModel:
    return open_model(diff_program_path("resnet"))


def drawn(model: DocumentModel) -> SceneLayout:
    scene = model.level.scene
    lay_out_all(scene, layout)
    return scene.compose()


def settle(model: DocumentModel, viewport: Viewport) -> SceneLayout:
    """What the view does after each layout: step up while the framing says so, then the drawing shown."""
    shown = drawn(model)
    while model.settle(shown.width, shown.height, viewport):
        shown = drawn(model)
    return shown


def test_candidate_depths_follow_the_item_counts() -> None:
    assert framing.first_depths([3, 40, 60]) == []  # small: opens flat
    # GPT-2's top level has 4 items: never opened there while a deeper level exists, the deepest of <= 60 first
    assert framing.first_depths([4, 9, 30, 90, 400]) == [3, 2]
    assert framing.first_depths([20, 70, 900]) == [1]  # nothing small enough deeper: the top level's 20
    assert framing.readable_scale(11) == READABLE and framing.readable_scale(9) == 1.0


def test_a_viewport_fits_a_drawing_at_a_readable_scale_only() -> None:
    vp = VIEWPORTS["1280x800"]
    room_w, room_h = vp.width - 2 * framing.START_MARGIN, vp.height - 2 * framing.START_MARGIN
    assert vp.fits(room_w / READABLE, room_h / READABLE)
    assert not vp.fits(room_w / READABLE + 2, 10) and not vp.fits(10, room_h / READABLE + 2)
    assert Viewport(120, 90, READABLE).fits(10_000, 10_000)  # not laid out yet: nobody judges by it


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_gpt2_opens_at_a_module_level_that_fits_readably(gpt2: DocumentModel, size: str) -> None:
    vp = VIEWPORTS[size]
    gpt2.level.framing = Framing.first_view(gpt2.level.scene.first_depths)
    gpt2.expand_to_depth(gpt2.level.scene.first_depths[0], ExpansionCause.SETTLE)
    candidates = list(gpt2.level.scene.first_depths)
    shown = settle(gpt2, vp)
    depth = gpt2.level.scene.expanded_depth()
    assert depth in candidates and gpt2.level.framing.settling is Settle.NONE
    assert vp.fits(shown.width, shown.height) or depth == candidates[-1]
    assert len([n for n in shown.nodes if n.kind == "node"]) + len(shown.groups) >= framing.MIN_FIRST_ITEMS


def test_fit_keeps_expand_all_and_frames_it_from_the_start(gpt2: DocumentModel) -> None:
    vp = VIEWPORTS["1400x900"]
    heard: list[object] = []
    end = gpt2.subscribe(heard.append)
    try:
        gpt2.expand_all()
        everything = set(gpt2.level.scene.expanded)
        shown = drawn(gpt2)
        assert not vp.fits(shown.width, shown.height)
        assert not gpt2.fit(shown.width, shown.height, vp), "the user's expansion is framed, not collapsed"
        assert gpt2.level.scene.expanded == everything and not any(
            isinstance(e, Expansion) and e.cause is ExpansionCause.FIT for e in heard)
    finally:
        end()
    frame = framing.fit_frame((0, 0, shown.width, shown.height), shown.start, shown.start_inputs, vp)
    assert frame.scale == READABLE and not frame.whole  # zoomed out to the legibility floor, no further
    x, y, w, h = frame.shown
    inputs = shown.start[:shown.start_inputs]
    assert inputs and all(x <= r[0] and r[0] + r[2] <= x + w and y <= r[1] and r[1] + r[3] <= y + h for r in inputs)
    below = framing.below(shown, frame.shown)
    assert below[-1] == "output" and len(below) > 20  # the program's end is below, and said
    text = framing.below_text(below)
    assert text.startswith(f"Fit: {len(below)} boxes below, down to ") and "output, at" in text
    assert "scroll down" in text


def test_resnet18_after_expand_all_says_fc_and_output_are_below(resnet18: DocumentModel) -> None:
    for vp in VIEWPORTS.values():
        resnet18.expand_all()
        shown = drawn(resnet18)
        assert not resnet18.fit(shown.width, shown.height, vp)
        frame = framing.fit_frame((0, 0, shown.width, shown.height), shown.start, shown.start_inputs, vp)
        below = framing.below(shown, frame.shown)
        assert below[-2:] == ["fc", "output"], below[-4:]
        assert "down to fc and output, at the smallest readable size" in framing.below_text(below)


def test_fit_steps_up_only_from_the_views_own_expansion() -> None:
    model = open_model(EXAMPLE)  # small: the first view opens flat, which does not fit readably here
    vp = Viewport(500, 400, READABLE)
    shown = drawn(model)
    depth = model.level.scene.expanded_depth()
    assert not vp.fits(shown.width, shown.height)
    assert model.fit(shown.width, shown.height, vp)  # stepped up one level (the view's own expansion)
    assert model.level.scene.expanded_depth() == depth - 1 and model.level.framing.settling is Settle.FIT
    settle(model, vp)
    assert model.level.scene.expanded_depth() < depth and model.level.framing.settling is Settle.NONE
    model.set_expanded("blocks.0", True)  # the user's from now on
    shown = drawn(model)
    assert model.level.framing.users and not model.fit(shown.width, shown.height, Viewport(200, 200, READABLE))


def test_expansion_is_part_of_back_and_forward() -> None:
    model = open_model(EXAMPLE)
    history = History(Place((), None, model.expansion()))
    first = model.expansion()
    model.expand_to_depth(1)
    history.visit(Place((), None, model.expansion()))
    assert len(history.places) == 2  # a place of its own
    model.select("linear")  # the first selection there replaces the bare place, as on a level just entered
    history.visit(Place((), "linear", model.expansion()))
    model.reveal("linear")  # the groups opened to show it belong to the selection's place
    history.visit(Place((), "linear", model.expansion()), amend=True)
    model.select("relu")
    history.visit(Place((), "relu", model.expansion()))
    assert len(history.places) == 3 and history.current.expanded == model.expansion()
    model.collapse_all()
    history.visit(Place((), "relu", model.expansion()))
    back = history.back()
    assert back is not None and back.selection == "relu" and back.expanded != first
    model.set_expansion(back.expanded)
    assert model.is_expanded("blocks.0.attn.qkv") and not model.is_expanded("blocks.1")
    assert history.back() == Place((), "linear", back.expanded)
    start = history.back()
    assert start is not None and start.expanded == first and start.selection is None
    model.set_expansion(start.expanded)
    assert model.expansion() == first
    assert history.forward() is not None and history.forward() == back


def test_a_shape_copied_from_a_node_is_found_as_written(gpt2: DocumentModel) -> None:
    shape = "f32[1, 16, 64]"  # a hidden state of the small GPT-2: as a regex, a character class
    index = gpt2.level.index
    assert index.search(shape) == []
    hits, reading = search(index, shape)
    assert hits and all(shape in h.text or h.field != "shape" for h in hits) and reading.as_type
    assert find_status(reading, len(hits)).endswith("searched as written (it looks like a type or shape)")
    assert find_label(reading) == f"'{shape}' (literally)"
    hits, reading = search(index, "linear")
    assert hits and not reading.literal
    hits, reading = search(index, "f32[")  # not a regex at all: as before
    assert hits and reading.literal and reading.problem is not None
    hits, reading = search(index, "[lm]")  # looks bracketed, matches nothing as written: searched as a regex
    assert hits and not reading.literal
