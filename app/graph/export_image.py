"""Save a graph scene as SVG or PNG (File > Export, and `pt2-viewer render`): the whole graph or the part in view.

PNG sizes stay within what Qt can read back (core/graph/image_limits.py); the file is written atomically
(core/util/files.py) and gets the user's usual permissions (the umask).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

from pt2_viewer.app.graph.items import GroupItem, NodeItem
from pt2_viewer.core.graph.image_limits import COLUMN_GAP, ColumnPlan, PngSize, column_plan, png_size
from pt2_viewer.core.util.files import write_atomically


def export_scene(scene: QGraphicsScene, path: str, region: QRectF | None = None) -> PngSize | None:
    """Render `region` of the scene (default: all of it) to `path` (.svg or .png), written atomically. Returns the
    PNG's size (None for SVG), so the caller can say when it was scaled down."""
    target = Path(path)
    rect = scene.sceneRect() if region is None else region.intersected(scene.sceneRect())
    if rect.isEmpty():
        rect = scene.sceneRect()
    size: PngSize | None = None

    def render(tmp: str) -> None:
        nonlocal size
        if target.suffix.lower() == ".svg":
            gen = QSvgGenerator()
            gen.setFileName(tmp)
            gen.setSize(QSize(int(rect.width()), int(rect.height())))
            gen.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
            gen.setTitle(target.stem)
            painter = QPainter(gen)
            scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
            painter.end()
        else:
            plan = column_plan(rect.width(), rect.height(), _node_spans(scene, rect))
            size = png_size(rect.width(), rect.height()) if plan is None else plan.size
            image = QImage(size.width, size.height, QImage.Format.Format_ARGB32)
            if image.isNull():
                raise OSError(f"not enough memory for a {size.width}x{size.height} image")
            image.fill(QColor(Qt.GlobalColor.white))
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            if plan is None:
                scene.render(painter, QRectF(0, 0, image.width(), image.height()), rect)
            else:
                _render_columns(scene, painter, rect, plan)
            painter.end()
            # the stubs type the format as bytes, but PySide6 takes it as str (bytes raise ValueError)
            if not image.save(str(tmp), "PNG"):  # type: ignore[call-overload]
                raise OSError(f"could not encode PNG ({image.width()}x{image.height()})")

    write_atomically(target, render, parents=False)
    return size


def _node_spans(scene: QGraphicsScene, rect: QRectF) -> list[tuple[float, float]]:
    """The y ranges (from `rect`'s top) that nodes cover, and expanded groups' title bars: where a column is
    never cut."""
    spans = []
    for item in scene.items(rect):
        if isinstance(item, NodeItem):
            box = item.sceneBoundingRect()
        elif isinstance(item, GroupItem):
            box = item.sceneBoundingRect()
            box.setHeight(min(box.height(), 28.0))  # its title, not the whole frame
        else:
            continue
        spans.append((box.top() - rect.top(), box.bottom() - rect.top()))
    return spans


def _render_columns(scene: QGraphicsScene, painter: QPainter, rect: QRectF, plan: ColumnPlan) -> None:
    """Each band of the region side by side, left to right, with a thin rule between two columns."""
    scale = plan.size.scale
    painter.save()
    painter.scale(scale, scale)
    rule = QPen(QColor(200, 200, 200), 1.0 / scale)
    for k, (top, bottom) in enumerate(plan.bands):
        x = k * (plan.width + COLUMN_GAP)
        scene.render(painter, QRectF(x, 0, plan.width, bottom - top),
                     QRectF(rect.left(), rect.top() + top, plan.width, bottom - top))
        if k:
            painter.setPen(rule)
            painter.drawLine(QPointF(x - COLUMN_GAP / 2, 0), QPointF(x - COLUMN_GAP / 2, bottom - top))
    painter.restore()
