"""How big a PNG of the graph may be: one that Qt (and so this app, and most viewers) can read back.

Qt refuses to read an image over its allocation limit (256 MB, QImageReader::allocationLimit) and no QImage side may
pass 32767 px. A big graph drawn at 2x easily passes both (5,497 x 16,000 px is 352 MB), so the scale is capped to
fit, and the caller says so.

A very tall graph (an 80-layer decoder expanded: 359 x 31,128 px, its text a pixel high) is folded into columns
instead (`column_plan`): cut between rows of nodes, never through one, and set side by side, at a scale where labels
stay legible. Where even that passes the limits, the picture keeps its legible scale and shows the top of the graph,
and says where it stopped (`ColumnPlan.cut_at`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MAX_SIDE = 32767  # QImage's own limit per side
MAX_BYTES = 256 * 1024 * 1024  # QImageReader's default allocation limit
BYTES_PER_PIXEL = 4  # ARGB32
SAFETY = 0.95  # stay clearly under the limits
PREFERRED_SCALE = 2.0  # sharp on high-DPI screens and in print
MIN_SCALE = 1.0  # the least scale of a folded picture: labels as the window draws them at 100 %
TALL = 3.0  # a picture taller than this many widths is folded into columns
COLUMN_GAP = 48.0  # scene units between two columns


@dataclass(frozen=True)
class PngSize:
    width: int
    height: int
    scale: float  # pixels per scene unit
    capped: bool  # smaller than PREFERRED_SCALE because of the limits
    columns: int = 1  # a tall graph folded into this many columns side by side
    shown: float = 1.0  # the part of the graph's height drawn (less than 1 when the rest would pass the limits)

    def note(self) -> str:
        """What the picture does not show as it is, for the line that says it was saved ("" when nothing)."""
        parts = []
        if self.columns > 1:
            parts.append(f"the tall graph is folded into {self.columns} columns, read left to right")
        if self.shown < 1.0:
            parts.append(f"only its top {self.shown:.0%} fits in a PNG at a legible scale, the rest is cut: save "
                         "as .svg for all of it, or draw fewer groups expanded")
        elif self.capped:
            parts.append(f"drawn at {self.scale:.0%} to stay within what image viewers open")
        return "; ".join(parts)

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


@dataclass(frozen=True)
class ColumnPlan:
    """A tall region drawn as columns: `bands` are the scene y ranges (from the region's top) drawn left to right,
    each `width` wide, `COLUMN_GAP` apart; `size` is the picture's. `cut_at` is where the picture stops when the
    whole graph does not fit at `MIN_SCALE` (None: all of it is drawn)."""

    bands: tuple[tuple[float, float], ...]
    width: float
    size: PngSize
    cut_at: float | None


def column_plan(width: float, height: float, busy: Sequence[tuple[float, float]],
                preferred: float = PREFERRED_SCALE) -> ColumnPlan | None:
    """How to fold a `width` x `height` region that is more than `TALL` times as tall as wide; None when it is not.
    `busy` are the y ranges that nodes cover (a column is never cut inside one)."""
    w, h = max(width, 1.0), max(height, 1.0)
    if h <= TALL * w:
        return None
    spans = _merged(busy)
    pixels = MAX_BYTES * SAFETY / BYTES_PER_PIXEL
    scale = min(preferred, math.sqrt(pixels / (w * h * 1.1)))  # 10 % for the gaps and the uneven cuts
    shown = h
    if scale < MIN_SCALE:
        scale = MIN_SCALE
        shown = _free_above(pixels / (1.1 * scale * scale * w), spans)
    columns = max(2, round(math.sqrt(shown / w)), math.ceil(shown * 1.1 * scale / (MAX_SIDE * SAFETY)))
    cuts = [0.0] + [_free_above(shown * k / columns, spans) for k in range(1, columns)] + [shown]
    bands = tuple((a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a)
    page_w = len(bands) * w + (len(bands) - 1) * COLUMN_GAP
    page_h = max(b - a for a, b in bands)
    fitted = png_size(page_w, page_h, scale)
    size = PngSize(fitted.width, fitted.height, fitted.scale, fitted.scale < preferred, len(bands), shown / h)
    return ColumnPlan(bands, w, size, shown if shown < h else None)


def _merged(spans: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for top, bottom in sorted(spans):
        if out and top <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], bottom))
        else:
            out.append((top, bottom))
    return out


def _free_above(y: float, spans: list[tuple[float, float]]) -> float:
    """`y`, or the top of the node span it falls in (a cut goes between rows, never through a node)."""
    for top, bottom in spans:
        if top < y < bottom:
            return top
    return y
