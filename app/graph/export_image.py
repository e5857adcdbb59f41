"""Save a graph scene as SVG or PNG (File > Export, and `pt2-viewer render`): the whole graph or the part in view.

PNG sizes stay within what Qt can read back (core/graph/image_limits.py); the file is written atomically
(core/util/files.py) and gets the user's usual permissions (the umask).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

from pt2_viewer.core.graph.image_limits import PngSize, png_size
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
            size = png_size(rect.width(), rect.height())
            image = QImage(size.width, size.height, QImage.Format.Format_ARGB32)
            if image.isNull():
                raise OSError(f"not enough memory for a {size.width}x{size.height} image")
            image.fill(QColor(Qt.GlobalColor.white))
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            scene.render(painter, QRectF(0, 0, image.width(), image.height()), rect)
            painter.end()
            # the stubs type the format as bytes, but PySide6 takes it as str (bytes raise ValueError)
            if not image.save(str(tmp), "PNG"):  # type: ignore[call-overload]
                raise OSError(f"could not encode PNG ({image.width()}x{image.height()})")

    write_atomically(target, render, parents=False)
    return size
