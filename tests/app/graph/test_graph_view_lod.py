"""The graph view at every zoom, on real programs in the real window: the overview stays readable (group titles a
fixed size on screen, op names in their boxes, kind colours saturated, hub chips faint), edge labels only where they
add information and never on one another, and the minimap only while the graph does not fit (View > Show Minimap,
remembered)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.items import DETAIL_LOD, OVERVIEW_TEXT_PX
from pt2_viewer.app.graph.minimap import MiniMap
from pt2_viewer.app.graph.view import GraphView
from pt2_viewer.app.main_window import MainWindow
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (fixture)

TIMEOUT = 240_000
EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"


def open_and_wait(qtbot, window: MainWindow, path: Path) -> DocumentWidget:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(path))
    return blocker.args[0]


def menu_action(window: MainWindow, menu: str, text: str):  # type: ignore[no-untyped-def]
    return next(a for m in window.menuBar().actions() if m.text() == menu
                for a in m.menu().actions() if a.text() == text)


def zoom_to(qtbot, view: GraphView, scale: float) -> QImage:  # type: ignore[no-untyped-def]
    view.resetTransform()
    view.scale(scale, scale)
    view.view_changed.emit()
    return view.viewport().grab().toImage()


def ink(img: QImage, rect, color: QColor) -> int:  # type: ignore[no-untyped-def]
    """Pixels in `rect` (viewport coordinates) close to `color`."""
    n = 0
    r = rect.intersected(img.rect())
    for x in range(r.left(), r.right() + 1):
        for y in range(r.top(), r.bottom() + 1):
            c = img.pixelColor(x, y)
            if abs(c.red() - color.red()) + abs(c.green() - color.green()) + abs(c.blue() - color.blue()) < 60:
                n += 1
    return n


def test_overview_is_readable_and_hub_chips_fade(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("deep_encoder"))
    with qtbot.waitSignal(doc.graph_ready, timeout=240_000):
        doc.expand_to_depth(2)  # the layers' frames open, their linears inside
    view = doc.view
    scale = 0.3
    assert scale < DETAIL_LOD
    img = zoom_to(qtbot, view, scale)
    # An op's name is written in its box, in the colour chosen for its (saturated) fill.
    node = next(i for i in view.nodes.values() if i.look.title == "linear"
                and view.viewport().rect().contains(view.mapFromScene(i.sceneBoundingRect()).boundingRect()))
    box = view.mapFromScene(node.sceneBoundingRect()).boundingRect().adjusted(2, 2, -2, -2)
    assert ink(img, box, node.overview_fill) > box.width() * box.height() // 3
    assert ink(img, box, node.overview_text) > 15
    assert node.overview_fill.hsvSaturationF() > node.kind_fill.hsvSaturationF()
    # A top-level frame's title is OVERVIEW_TEXT_PX high on screen: its text is there, dark on the plate.
    frame = next(g for g in view.groups.values() if g.box.expanded and g.box.depth == 1
                 and view.viewport().rect().contains(view.mapFromScene(g.sceneBoundingRect().topLeft())))
    top = view.mapFromScene(frame.sceneBoundingRect().topLeft())
    title = img.copy(top.x() + 8, top.y() + 4, 120, int(OVERVIEW_TEXT_PX) + 6)
    assert ink(title, title.rect(), frame.title_color) > 40


def test_hub_chips_are_faint_when_zoomed_out(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, EXAMPLE)
    view = doc.view
    assert view.proxies, "the example's hubs are drawn as references beside their users"
    view.centerOn(view.proxies[0])
    img = zoom_to(qtbot, view, 0.3)
    node = next(iter(view.nodes.values()))
    # Hub chips are faint marks, lighter than the nodes around them; close up they are `↳ name` chips again.
    chip = next(p for p in view.proxies if view.viewport().rect().contains(view.mapFromScene(p.sceneBoundingRect())
                                                                           .boundingRect()))
    at = view.mapFromScene(chip.sceneBoundingRect().center())
    assert img.pixelColor(at).lightness() > node.overview_fill.lightness()
    view.centerOn(chip)
    close = zoom_to(qtbot, view, 1.5)
    at = view.mapFromScene(chip.sceneBoundingRect().center())
    assert close.pixelColor(at).lightness() > 200 or ink(close, view.mapFromScene(chip.sceneBoundingRect())
                                                         .boundingRect(), chip.text_color) > 5


def test_edge_labels_only_where_they_add_information(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("split_chunks"))
    view = doc.view
    assert view.edges is not None
    view.fit()
    # At the normal label zoom, only labels a node does not already print: the outputs of a multi-output op.
    zoom_to(qtbot, view, 1.0)
    drawn = view.edges.drawn_labels
    assert drawn and all(e.src not in view.nodes or text != view.nodes[e.src].look.subtitle for _, text, e in drawn)
    assert "f32[2, 2]" in {text for _, text, _ in drawn}  # a chunk of the split's f32[2, 2] (+2)
    everything = len(view.edges.layout.edges)
    # Close up every edge may be labelled, and no two labels ever overlap.
    for scale in (1.0, 2.0, 3.0):
        zoom_to(qtbot, view, scale)
        rects = [r for r, _, _ in view.edges.drawn_labels]
        assert all(not a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])
    assert len(drawn) < len(view.edges.drawn_labels) <= everything  # close up, the repeated ones too


def test_minimap_only_when_needed_and_the_choice_is_remembered(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    small = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    qtbot.waitUntil(lambda: not small.minimap.pixmap.isNull())
    assert not small.minimap.isVisible()  # 7 nodes fit: no minimap over them
    big = open_and_wait(qtbot, window, pt2_path("deep_encoder"))
    qtbot.waitUntil(lambda: big.minimap.isVisible())
    # In the view's bottom-right corner, translucent, clear of the top-left group titles.
    geo, port = big.minimap.geometry(), big.view.viewport().geometry()
    assert geo.right() > port.center().x() and geo.bottom() > port.center().y()
    big.view.fit()
    qtbot.waitUntil(lambda: not big.minimap.isVisible())
    zoom_to(qtbot, big.view, 1.0)
    qtbot.waitUntil(lambda: big.minimap.isVisible())
    action = menu_action(window, "&View", "Show &Minimap")
    assert action.isCheckable() and action.isChecked()
    action.trigger()
    assert not big.minimap.isVisible() and not small.minimap.wanted
    assert str(QSettings("pt2-viewer", "PT2 Viewer").value(MiniMap.SETTING)).lower() == "false"
    try:
        again = MainWindow(interactive=False)
        qtbot.addWidget(again)
        assert not menu_action(again, "&View", "Show &Minimap").isChecked()
    finally:
        action.trigger()
    assert big.minimap.isVisible()


def test_a_palette_change_redraws_in_dark_colours(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("dynamic_shapes"))
    light = doc.view.nodes["matmul"].kind_fill
    app = QApplication.instance()
    old = app.palette()
    dark = QPalette(old)
    dark.setColor(QPalette.ColorRole.Window, QColor("#202124"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1f22"))
    try:
        with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
            app.setPalette(dark)
        item = doc.view.nodes["matmul"]
        assert item.kind_fill.lightness() < light.lightness() and item.text_color.lightness() > 200
        assert doc.view.backgroundBrush().color() == QColor("#1e1f22")
    finally:
        with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
            app.setPalette(old)
    assert doc.view.nodes["matmul"].kind_fill == light  # the palette is back for the other tests


def test_a_comparison_shows_one_minimap_when_asked(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("deep_encoder"))
    window.compare_with(doc, doc.model.archive, doc.model.program)
    qtbot.waitUntil(lambda: isinstance(window.current_tab(), CompareView), timeout=TIMEOUT)  # built off the GUI thread
    view = window.current_tab()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.left.ready and view.right.ready, timeout=TIMEOUT)
    for side in (view.left, view.right):
        zoom_to(qtbot, side.view, 1.0)
    qtbot.waitUntil(lambda: view.left.minimap.in_comparison, timeout=TIMEOUT)
    assert not view.left.minimap.isVisible()  # the panes are narrow: a minimap only when asked
    view.minimaps.setChecked(True)
    qtbot.waitUntil(lambda: view.left.minimap.isVisible(), timeout=TIMEOUT)
    assert view.right.minimap.beside_another and not view.right.minimap.isVisible()


def test_edge_tiles_are_built_when_first_painted_and_bound_their_edges(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """The edges are batched per tile, each tile's paths built when it is first painted: its bounds, known before,
    hold every curve and arrowhead of it (a part outside them would never be drawn). On the bundled example."""
    doc = open_and_wait(qtbot, window, EXAMPLE)
    edges = doc.view.edges
    assert edges is not None and len(edges.tiles) > 1
    for tile in edges.tiles:
        path, arrows = tile.paths()
        assert tile.rect.contains(path.boundingRect()) and tile.rect.contains(arrows.boundingRect()), tile.rect
