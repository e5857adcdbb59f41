"""Render the app icon's PNG sizes from resources/icons/pt2-viewer.svg.

Desktops that do not read SVG icons (and every file manager at 16 px) want fixed-size PNGs in the hicolor theme, so
the PNGs are committed next to the SVG. Run this after editing the SVG; `--check` exits 1 when a committed PNG no
longer matches a fresh render (the tests run it that way).

    .venv/bin/python packaging/render_icons.py [--check]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ICON_DIR = Path(__file__).resolve().parents[1] / "resources" / "icons"
SVG = ICON_DIR / "pt2-viewer.svg"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


def png_path(size: int) -> Path:
    return ICON_DIR / f"pt2-viewer-{size}.png"


def render(size: int):
    """The icon at `size` x `size` pixels as a QImage (transparent outside the tile)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {SVG} is not a valid SVG; fix the file and run again")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def _save_atomically(image, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    if not image.save(str(tmp), "PNG"):
        raise SystemExit(f"render_icons: could not write {tmp}; check that the folder is writable")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the committed PNGs instead of writing them")
    args = parser.parse_args(argv)

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication, QImage

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (QPainter wants a GUI application)
    stale: list[str] = []
    for size in SIZES:
        image = render(size)
        path = png_path(size)
        if args.check:
            committed = QImage(str(path)).convertToFormat(QImage.Format.Format_ARGB32)
            if committed.isNull() or committed != image:
                stale.append(path.name)
        else:
            _save_atomically(image, path)
            print(f"wrote {path}")
    if stale:
        print(f"render_icons: out of date with {SVG.name}: {', '.join(stale)}; "
              "run `.venv/bin/python packaging/render_icons.py`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
