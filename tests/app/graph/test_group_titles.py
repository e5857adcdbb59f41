"""Group titles drawn by the view (app/graph/group_titles.py) on a real program: a frame whose top has scrolled off
keeps its title at the top of the view, nested ones stack without overlapping, and the breadcrumb names the module
path at the view's centre."""
from __future__ import annotations

from PySide6.QtCore import QRectF

from pt2_viewer.app.main_window import MainWindow
from tests.app.graph.test_graph_tools import TIMEOUT, open_and_wait
from tests.programs import pt2_path  # noqa: F401  (fixture)


def test_sticky_titles_and_breadcrumb(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_and_wait(qtbot, window, pt2_path("hf_tiny_bert"))
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()
    view = doc.view
    frames = [g for g in view.groups.values() if g.box.expanded]
    deepest = max(frames, key=lambda g: g.box.depth)
    assert deepest.box.depth >= 3 and all(g.titled_by_view for g in frames)
    view.resetTransform()
    r = deepest.sceneBoundingRect()
    view.centerOn(r.center().x(), r.top() + view.viewport().height() / 2 + 40)  # the frame's top just off screen
    painted = view.painted
    view.viewport().repaint()
    assert view.painted > painted
    placed = {t.path: t for t in view.titles.placed}
    assert deepest.path in placed and placed[deepest.path].stuck
    chain = [p for p in placed if deepest.path.startswith(p)]  # its enclosing frames, all stuck above it
    assert len(chain) >= 3
    rects = [QRectF(*t.rect) for t in view.titles.placed]
    assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])
    assert all(rect.top() >= 17 for rect in rects)  # under the breadcrumb's row
    assert view.titles.breadcrumb_text().endswith(deepest.box.title)
    assert " › " in view.titles.breadcrumb_text()


def test_hub_chips_print_their_name_wherever_the_nodes_print_theirs(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Side by side (a comparison) the graphs are zoomed out to about 0.6: the `↳ sym_size` chips there must say
    which hub they stand for, not be empty grey bars."""
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

    from pt2_viewer.app.graph.items import DETAIL_LOD, PROXY_TEXT_LOD, ProxyItem

    assert PROXY_TEXT_LOD <= DETAIL_LOD
    scene = QGraphicsScene()
    chip = ProxyItem("sym_size_int_9", 0, 0)
    scene.addItem(chip)
    view = QGraphicsView(scene)
    view.scale(0.6, 0.6)
    rect = chip.sceneBoundingRect()
    image = QImage(int(rect.width() * 0.6) + 4, int(rect.height() * 0.6) + 4, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    p = QPainter(image)
    p.scale(0.6, 0.6)
    scene.render(p, rect, rect)
    p.end()
    colours = {image.pixelColor(x, y).name() for x in range(image.width()) for y in range(image.height())}
    assert len(colours) > 4  # text antialiased over the chip, not one flat bar
