"""Where the view draws module groups' titles, in screen pixels, so they stay readable and never overlap.

A title sits at its frame's top-left while that corner is on screen. Once the frame's top (or left edge) scrolls off,
the title sticks to the top (or left) of the view for as long as the frame is on screen: a sticky header, as code
editors do for the enclosing scopes. Nested frames stuck at once stack, outermost first, one row each. A title that
would overlap one already placed moves down below it; one that would cover a node while its frame's top is on screen
(zoomed out, the text is taller than the band Graphviz left for it) goes just above the frame if there is room there,
else it is left out: the breadcrumb and the group's tooltip still name it. The top row is the breadcrumb's: the
module path at the view's centre.

Plain geometry over (x, y, w, h) tuples, so it is tested without Qt; app/graph/view.py measures text and paints.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

Rect = tuple[float, float, float, float]  # x, y, w, h in screen pixels
MIN_FRAME_W = 60.0  # narrower on screen: no title
PAD = 6.0


class Frame(msgspec.Struct, frozen=True):
    """An expanded group's frame as the view shows it now."""

    path: str
    title: str
    rect: Rect  # on screen
    depth: int


class PlacedTitle(msgspec.Struct, frozen=True):
    """Where a group's title is drawn on screen."""

    path: str
    text: str
    rect: Rect
    stuck: bool  # drawn at the view's edge because the frame's own corner is off screen


def _overlaps(a: Rect, b: Rect) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _crosses(a: Rect, frame: Rect) -> bool:
    """Whether `a` lies across the edge of `frame` (overlapping it without being inside it)."""
    inside = (frame[0] <= a[0] and frame[1] <= a[1] and a[0] + a[2] <= frame[0] + frame[2]
              and a[1] + a[3] <= frame[1] + frame[3])
    return _overlaps(a, frame) and not inside


def place_titles(frames: Sequence[Frame], view_w: float, view_h: float, row_h: float, top: float,
                 text_w: Callable[[str], float], covers_node: Callable[[Rect], bool] = lambda r: False
                 ) -> list[PlacedTitle]:
    """The titles to draw, outermost frames first. `top` is the first pixel row below the breadcrumb; `text_w`
    measures a title; `covers_node(rect)` says whether a rect on screen covers a node (titles at their frame's own
    corner keep off them)."""
    placed: list[PlacedTitle] = []
    for f in sorted(frames, key=lambda f: (f.depth, f.rect[1], f.rect[0])):
        x0, y0, w, h = f.rect
        right, bottom = min(x0 + w, view_w), min(y0 + h, view_h)
        left = max(x0, 0.0)
        if right - left < MIN_FRAME_W or bottom <= top or y0 >= view_h or x0 + w <= 0:
            continue
        stuck = y0 + 2 < top or x0 < 0
        x, y = left + PAD, max(y0 + 2, top)
        width = min(text_w(f.title) + 2 * PAD, right - x - PAD)
        if width < 24:
            continue
        rect: Rect = (x, y, width, row_h)
        while True:
            hit = next((p.rect for p in placed if _overlaps(rect, p.rect)), None)
            if hit is None:
                break
            rect = (x, hit[1] + hit[3] + 1, width, row_h)
        if rect[1] + row_h > bottom - 2:
            continue  # the frame's visible part has no room left for it
        if not stuck and covers_node(rect):
            # zoomed out, the band Graphviz left for the title is thinner than the text: try just above the frame
            above: Rect = (x, y0 - row_h - 1, width, row_h)
            if (above[1] < top or covers_node(above) or any(_overlaps(above, p.rect) for p in placed)
                    or any(_crosses(above, g.rect) for g in frames if g is not f)):
                continue  # no room there either (or it would sit across another frame's edge, mislabelling it)
            rect = above
        placed.append(PlacedTitle(f.path, f.title, rect, stuck or rect[1] > y0 + 2))
    return placed


def breadcrumb(frames: Sequence[Frame], x: float, y: float) -> list[Frame]:
    """The frames containing the point (x, y) on screen (the view's centre), outermost first: where the view is."""
    inside = [f for f in frames if f.rect[0] <= x <= f.rect[0] + f.rect[2] and f.rect[1] <= y <= f.rect[1] + f.rect[3]]
    return sorted(inside, key=lambda f: f.depth)
