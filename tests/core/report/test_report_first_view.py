"""What a `.pt2` report shows when it opens, read in headless Chromium from the page's own account of its first view
(the self-test's `first_view`: the zoom, the graph pane, the side panel, each user input's box on screen, the titles
drawn): leaf modules are their op's box, and every input is inside the graph pane, none past it under the side
panel. Real programs from the zoo, at the two window sizes issue 22 reads the window at."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pt2_viewer.core.cli import report as report_cli
from tests.core.report.browser import run_selftest
from tests.programs import ExportFailed
from tests.zoo.cache import program_by_id, zoo_path

SIZES = ((1400, 900), (1280, 800))


def report_of(program_id: str, out: Path) -> Path:
    try:
        pt2 = zoo_path(program_by_id(program_id))
    except ExportFailed as e:
        pytest.fail(f"torch exported {program_id} before; now: {e.reason}")
    parser = argparse.ArgumentParser()
    report_cli.configure(parser)
    assert report_cli.main(parser.parse_args([str(pt2), "-o", str(out)])) == 0
    return out


def inside(box: list[float], pane: list[float]) -> bool:
    x, y, w, h = box
    return x >= pane[0] and y >= pane[1] and x + w <= pane[0] + pane[2] and y + h <= pane[1] + pane[3]


@pytest.fixture(scope="module")
def resnet_page(tmp_path_factory) -> Path:
    return report_of("resnet18", tmp_path_factory.mktemp("report") / "resnet18.html")


def test_resnet_opens_with_leaf_modules_as_op_boxes(resnet_page, tmp_path):
    run = run_selftest(resnet_page, "conv1", tmp_path / "profile")
    assert run.result["errors"] == [] and run.console == []
    first = run.result["first_view"]
    # the stem's modules are boxes titled with the module; none of them is drawn as a frame
    assert {"conv1: Conv2d", "bn1: BatchNorm2d", "relu: ReLU", "maxpool: MaxPool2d"} <= set(first["nodes"])
    assert not {"conv1: Conv2d", "bn1: BatchNorm2d", "relu: ReLU", "maxpool: MaxPool2d"} & set(first["groups"])
    assert "layer1: Sequential" in first["groups"], "a module of several ops is still a frame"
    # search matches a leaf by its module's name, and expand-all draws no frame around one op
    assert run.result["search"]["hits"] >= 1
    assert run.result["all_open"]["nodes"] == 193
    # frames: layer1-4, their 8 blocks and 3 downsamples; the other 60 modules hold one op each and are its box
    assert run.result["all_open"]["groups"] == 15
    # the header counts the groups as the window's Expand all does, and says what the rest are (it said "75 module
    # groups" where the window said "Expanded 15 groups", issue 43 §4)
    assert run.result["group_count_text"] == "15 module groups (+60 one-op modules drawn as their op)"
    assert run.result["all_open"]["text"] == "193 boxes shown, 15 of 15 groups open"
    placeholder = run.result["search_placeholder"]
    assert placeholder["width"] <= placeholder["room"], placeholder  # whole, not cut


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("program_id", ["resnet18", "bert"])
def test_every_input_is_in_the_graph_pane_at_first_view(program_id, size, tmp_path):
    """BERT's attention_mask is laid out far below input_ids (it meets the graph at the encoder's masks): the page
    used to open at its top, readable, with the mask off screen; now it zooms out until both inputs show."""
    page = report_of(program_id, tmp_path / f"{program_id}.html")
    run = run_selftest(page, "", tmp_path / "profile", size)
    assert run.result["errors"] == [] and run.console == []
    first = run.result["first_view"]
    pane, side = first["graph"], first["side"]
    assert pane[0] + pane[2] <= side[0] + 0.5, "the graph pane ends where the side panel starts"
    inputs = {i["name"]: i["box"] for i in first["inputs"]}
    assert set(inputs) == ({"x"} if program_id == "resnet18" else {"input_ids", "attention_mask"})
    outside = [name for name, box in inputs.items() if not inside(box, pane)]
    assert not outside, f"inputs outside the graph pane at {size}: {outside} ({first})"
    if program_id == "resnet18":
        assert first["scale"] >= 0.6, "a readable zoom when the inputs allow it"
