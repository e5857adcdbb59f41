"""How big a PNG of the graph may be: one that Qt (and so this app, and most viewers) can read back.

Qt refuses to read an image over its allocation limit (256 MB, QImageReader::allocationLimit) and no QImage side may
pass 32767 px. A big graph drawn at 2x easily passes both (5,497 x 16,000 px is 352 MB), so the scale is capped to
fit, and the caller says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MAX_SIDE = 32767  # QImage's own limit per side
MAX_BYTES = 256 * 1024 * 1024  # QImageReader's default allocation limit
BYTES_PER_PIXEL = 4  # ARGB32
SAFETY = 0.95  # stay clearly under the limits
PREFERRED_SCALE = 2.0  # sharp on high-DPI screens and in print


@dataclass(frozen=True)
class PngSize:
    width: int
    height: int
    scale: float  # pixels per scene unit
    capped: bool  # smaller than PREFERRED_SCALE because of the limits

    @property
    def megabytes(self) -> float:
        return self.width * self.height * BYTES_PER_PIXEL / (1024 * 1024)


def png_size(width: float, height: float, preferred: float = PREFERRED_SCALE) -> PngSize:
    """The pixel size of a PNG of a `width` x `height` scene region: `preferred` pixels per unit, less if needed."""
    w, h = max(width, 1.0), max(height, 1.0)
    by_side = MAX_SIDE * SAFETY / max(w, h)
    by_bytes = math.sqrt(MAX_BYTES * SAFETY / BYTES_PER_PIXEL / (w * h))
    scale = min(preferred, by_side, by_bytes)
    return PngSize(max(1, int(w * scale)), max(1, int(h * scale)), scale, scale < preferred)
