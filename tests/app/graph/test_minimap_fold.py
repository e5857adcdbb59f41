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
