"""Save a graph scene as SVG or PNG (File > Export, and `--screenshot`'s sibling `render`)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

MAX_PNG_SIDE = 16000


def export_scene(scene: QGraphicsScene, path: str) -> None:
    """Render the whole scene to `path` (.svg or .png), written atomically."""
    target = Path(path)
    rect = scene.sceneRect()
    fd, tmp = tempfile.mkstemp(suffix=target.suffix, dir=str(target.parent or "."))
    os.close(fd)
    try:
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
            scale = min(2.0, MAX_PNG_SIDE / max(rect.width(), rect.height(), 1))
            image = QImage(int(rect.width() * scale), int(rect.height() * scale), QImage.Format.Format_ARGB32)
            image.fill(QColor(Qt.GlobalColor.white))
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            scene.render(painter, QRectF(0, 0, image.width(), image.height()), rect)
            painter.end()
            if not image.save(tmp, "PNG"):
                raise OSError(f"could not encode PNG ({image.width()}x{image.height()})")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
