"""The first view through the real window, on real exports: weights drawn inside their ops, the view description
`--screenshot` writes beside the picture (and that it agrees with the picture), selecting a weight's row, View >
Show Weights as Nodes (remembered), and Fit that keeps labels readable without collapsing what the user expanded."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QImage

from pt2_viewer.app import theme
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.items import NodeItem, WeightRowItem
from pt2_viewer.app.graph.view import READABLE_SCALE
from pt2_viewer.app.graph.view_settings import WEIGHTS_SETTING
from pt2_viewer.app.main_window import MainWindow
from tests.first_view import first_view_problems, screenshot
from tests.programs import ExportFailed, pt2_path  # noqa: F401  (fixture)
from tests.zoo.cache import program_by_id, zoo_path

TIMEOUT = 240_000


@pytest.fixture(scope="module")
def resnet18() -> Path:
    try:
        return zoo_path(program_by_id("resnet18"))
    except ExportFailed as e:
        pytest.fail(f"torch exported resnet18 before; now: {e.reason}")


def open_and_wait(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    return blocker.args[0]


def view_action(window: MainWindow, text: str):  # type: ignore[no-untyped-def]
    menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "&View")
    return next(a for a in menu.actions() if a.text() == text)


def filled(img: QImage, box: list[int], colour) -> float:  # type: ignore[no-untyped-def]
    """The share of a box's pixels (its top half, where no text is drawn at the left edge) close to `colour`."""
    x, y, w, h = box
    near = total = 0
    for px in range(x + 2, x + w - 2, 2):
        for py in range(y + 2, y + h - 2, 2):
            c = img.pixelColor(px, py)
            total += 1
            near += abs(c.red() - colour.red()) + abs(c.green() - colour.green()) + abs(c.blue() - colour.blue()) < 24
    return near / max(1, total)


def test_screenshot_description_agrees_with_the_picture(qtbot, window: MainWindow, resnet18: Path,
                                                        tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "resnet18.png"
    described = screenshot(window, resnet18, out, (1400, 900))
    doc = window.current_tab().graphs()[0]
    assert described["tab"] == str(resnet18) and described["zoom"] >= READABLE_SCALE
    assert first_view_problems(described, doc.model) == []
    items = {i["name"]: i for i in described["items"]}
    conv, row = items["conv2d"], items["p_conv1_weight"]
    assert (conv["kind"], conv["label"], row["kind"], row["label"]) == ("node", "conv1: Conv2d", "weight_row", "weight")
    cx, cy, cw, ch = conv["box"]
    rx, ry, rw, rh = row["box"]
    assert cx <= rx and rx + rw <= cx + cw and cy + 20 <= ry and ry + rh <= cy + ch + 1, "the row is inside its op"
    # the boxes are where the picture has them: the conv's fill in the conv's box, not around it
    img = QImage(str(out))
    fill = theme.kind_color("conv")
    assert filled(img, conv["box"], fill) > 0.3
    assert filled(img, [cx + cw + 10, cy, cw, ch], fill) < 0.05
    # an item said to be wholly visible lies inside the picture; the ones cut by its edge are described too
    assert all(0 <= i["box"][0] and i["box"][0] + i["box"][2] <= img.width() and 0 <= i["box"][1]
               and i["box"][1] + i["box"][3] <= img.height() for i in described["items"] if i["visible"])


def test_selecting_a_weights_row_selects_the_weight(qtbot, window: MainWindow, resnet18: Path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, resnet18)
    row = doc.view.nodes["b_bn1_running_var"]
    assert isinstance(row, WeightRowItem) and row.box.host == "batch_norm"
    doc.view.centerOn(row)
    at: QPoint = doc.view.mapFromScene(row.sceneBoundingRect().center())
    qtbot.mouseClick(doc.view.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert doc.model.selection == "b_bn1_running_var"
    assert row.state == 2 and doc.view.nodes["batch_norm"].state == 1  # its user is its neighbour
    doc.reveal("p_fc_weight")  # Find and the panels reach a row like any node
    qtbot.waitUntil(lambda: doc.model.selection == "p_fc_weight" and "p_fc_weight" in doc.view.nodes, timeout=TIMEOUT)
    assert isinstance(doc.view.nodes["p_fc_weight"], WeightRowItem)


def test_show_weights_as_nodes_is_remembered(qtbot, window: MainWindow, resnet18: Path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, resnet18)
    action = view_action(window, "Show &Weights as Nodes")
    assert action.isCheckable() and not action.isChecked()
    try:
        with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
            action.trigger()
        assert QSettings("pt2-viewer", "PT2 Viewer").value(WEIGHTS_SETTING) in (True, "true")
        assert not any(isinstance(i, WeightRowItem) for i in doc.view.nodes.values())
        assert isinstance(doc.view.nodes["x"], NodeItem)
        again = MainWindow(interactive=False)
        qtbot.addWidget(again)
        assert view_action(again, "Show &Weights as Nodes").isChecked()
        other = open_and_wait(qtbot, again, resnet18)
        assert other.model.weights_as_nodes and not other.model.level.scene.folding.host
    finally:
        if action.isChecked():
            with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
                action.trigger()
    assert any(isinstance(i, WeightRowItem) for i in doc.view.nodes.values())
    assert QSettings("pt2-viewer", "PT2 Viewer").value(WEIGHTS_SETTING) in (False, "false")


@pytest.mark.parametrize("via", ["toolbar", "background menu"])
def test_fit_keeps_labels_readable_and_the_users_expansion(qtbot, window: MainWindow, pt2_path, via: str) -> None:  # type: ignore[no-untyped-def]
    """Fit never shrinks labels to a hairline, and never collapses what the user expanded (issue 30): after Expand
    all it zooms out to the legibility floor at most; collapsing is Collapse All's, the depth box's."""
    doc = open_and_wait(qtbot, window, pt2_path("deep_encoder"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()
    scene = doc.model.level.scene
    everything, drawn = set(scene.expanded), len(doc.view.nodes)
    if via == "toolbar":
        doc.fit()
    else:  # a right-click on the background: its Fit is the same readable Fit
        next(a for a in doc.item_menu("").actions() if a.text() == "Fit").trigger()
    assert doc.view.transform().m11() >= READABLE_SCALE, "labels stay readable"
    assert scene.expanded == everything and len(doc.view.nodes) == drawn and not doc.laying_out


def test_a_leaf_modules_menu_collapses_the_module_around_it(qtbot, window: MainWindow, resnet18: Path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, resnet18)
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()
    leaf = doc.view.nodes["conv2d_1"]  # layer1.0.conv1, drawn as its op's box
    assert leaf.box.module == "layer1.0.conv1" and leaf.title == "conv1: Conv2d"
    texts = [a.text() for a in doc.item_menu("conv2d_1").actions()]
    assert "Collapse Group '0: BasicBlock'" in texts, texts
