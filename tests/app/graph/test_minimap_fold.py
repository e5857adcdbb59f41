"""The minimap of a tall graph (a deep network is one long column) is a folded overview: the scene cut into bands
laid side by side in a taller strip, not a thin line; clicks and the view's box map through the folds."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtWidgets import QGraphicsRectItem

from pt2_viewer.app.graph.minimap import MiniMap
from pt2_viewer.app.graph.view import GraphView


def test_a_tall_scene_is_folded_into_columns(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    scene = view.scene()
    scene.addItem(QGraphicsRectItem(0, 0, 200, 40_000))
    scene.setSceneRect(QRectF(0, 0, 200, 40_000))
    minimap = MiniMap(view, view)
    minimap.refit()
    unfolded_w = 200 * (minimap.base_size()[1] - 4) / 40_000  # one column in the usual box: under a pixel
    assert minimap.columns > 4 and minimap.column_w > 10 * unfolded_w and minimap.column_w >= 8
    assert minimap.height() > minimap.base_size()[1]  # the taller strip
    # a click in the third column lands in the third band of the scene
    step = minimap.column_w + minimap.GAP
    pos = QPointF(minimap.target.x() + 2 * step + minimap.column_w / 2, minimap.target.center().y())
    band = 40_000 / minimap.columns
    assert 2 * band <= minimap._to_scene(pos).y() <= 3 * band
    # the view's box is drawn in the column that shows where the view is
    view.centerOn(100, 2.5 * band)
    (box,) = minimap.view_boxes()
    assert minimap.target.x() + 2 * step - 1 <= box.center().x() <= minimap.target.x() + 3 * step


def test_a_wide_scene_stays_one_column(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    view.scene().addItem(QGraphicsRectItem(0, 0, 3000, 1000))
    view.scene().setSceneRect(QRectF(0, 0, 3000, 1000))
    minimap = MiniMap(view, view)
    minimap.refit()
    assert minimap.columns == 1 and minimap.height() == minimap.base_size()[1]


def test_a_big_graphs_minimap_is_painted_from_its_boxes(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Above BOXES_ABOVE nodes the picture is painted from the items' boxes (no paint() per item): each node and
    collapsed group shows in its overview colour where the folded map puts it. On the bundled example (a real
    transformer export) collapsed to its top level, so that boxes are a few pixels big, with the bound lowered to 0."""
    from pt2_viewer.core.graph.document import DocumentModel
    from pt2_viewer.core.layout.driver import lay_out_all
    from pt2_viewer.core.layout.engine import layout
    from pt2_viewer.core.pt2.reader import read_archive
    from tests.app.graph.test_graph_tools import EXAMPLE

    archive = read_archive(EXAMPLE)
    model = DocumentModel(archive, archive.programs[0])
    model.level.scene.collapse_all()
    lay_out_all(model.level.scene, layout)
    composed = model.level.scene.compose()
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    view.show_layout(composed, model.looks(n.node for n in composed.nodes), model.edge_labeller())
    monkeypatch.setattr(MiniMap, "BOXES_ABOVE", 0)
    minimap = MiniMap(view, view)
    minimap.refit()
    picture = minimap.pixmap.toImage()
    ratio = minimap.pixmap.devicePixelRatio()
    scale = minimap.column_w / minimap.source.width()
    hosts = {n.box.host for n in view.nodes.values() if n.box.kind == "weight_row"}  # their middle is a row's
    boxes = [(n, n.kind_overview) for n in view.nodes.values() if n.name not in hosts]
    boxes += [(g, g.overview_fill) for g in view.groups.values()]
    checked = 0
    for item, colour in boxes:
        rect = item.sceneBoundingRect()
        spot = minimap._to_map(rect)
        if spot is None or min(rect.width(), rect.height()) * scale < 4:
            continue  # too small to have a pixel of its own colour
        x, y = (spot.center().x() - minimap.target.x()) * ratio, (spot.center().y() - minimap.target.y()) * ratio
        assert picture.pixelColor(int(x), int(y)).rgb() == colour.rgb(), item
        checked += 1
    assert checked >= 3, checked
