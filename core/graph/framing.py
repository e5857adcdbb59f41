"""What the first view shows and what Fit does, decided in one place and without Qt.

The view only asks: which module level a program opens at (`first_depths`), whether a drawing fits a viewport with
every label readable (`Viewport.fits`), where to look at a drawing (`start_frame`, `fit_frame`: a scale and the
scene rectangle shown), and, drawing by drawing, whether to step up to a shallower level (`Framing`).

The rules:
- A small program (FLAT_ITEMS boxes) opens flat. Others open at a whole module level: the deepest whose items number
  at most FIRST_VIEW_ITEMS, never one of fewer than MIN_FIRST_ITEMS items while a deeper one exists (GPT-2's top is
  input, transformer, lm_head, output). While the laid-out level does not fit the window readably, the view steps up
  one level, down to the shallowest of MIN_FIRST_ITEMS items, as Model Explorer opens.
- No label is ever drawn under MIN_LABEL_PX on screen: a drawing too big for that is shown from where the program
  starts (its inputs and what they feed), the start at the top.
- Fit frames what is expanded. A drawing that fits readably is shown whole; one that does not is zoomed out to the
  legibility floor and scrolled so the start shows, and the user is told what is below. Fit collapses groups only
  while the expansion is still the view's own (the first view's): an expansion the user made (expand all, a depth,
  a group, Find's reveal, history) is theirs, and only their own commands collapse it.

Coordinates are scene points, y down; a rectangle is (x, y, w, h). Viewport sizes are pixels.
"""
from __future__ import annotations

import math
from enum import Enum

import msgspec

from pt2_viewer.core.graph.drawing import GroupBox, NodeBox, SceneLayout

FLAT_ITEMS = 60  # programs drawing at most this many boxes open fully expanded (down to MAX_OPEN_DEPTH)
MAX_OPEN_DEPTH = 24  # groups deeper than this open collapsed (only crafted archives nest modules that deep)
MIN_FIRST_ITEMS = 8  # the first view shows at least this many items (or the whole program)
FIRST_VIEW_ITEMS = 60  # the first view's level holds at most about this many items unless the window says otherwise
MIN_LABEL_PX = 9.0  # no label of the first view (or of Fit) is drawn smaller than this on screen
MIN_ROOM_PX = 200  # a viewport smaller than this is not laid out yet: the first view does not judge by it
START_MARGIN = 24  # pixels between the shown region and the viewport's edge

Rect = tuple[float, float, float, float]


def readable_scale(smallest_label_px: float) -> float:
    """The least zoom at which a label `smallest_label_px` high in the scene is MIN_LABEL_PX high on screen, rounded
    up (9 px exactly, never 8.999)."""
    return math.ceil(100 * MIN_LABEL_PX / smallest_label_px) / 100


def first_depths(counts: list[int], max_items: int = FIRST_VIEW_ITEMS) -> list[int]:
    """The depths the first view may open at, deepest first ([]: open flat). `counts[d]` is how many boxes show with
    the groups of depth d and above expanded (`SceneModel.level_item_counts`), i.e. at `expand_to_depth(d + 1)`."""
    if not counts or counts[-1] <= FLAT_ITEMS:
        return []
    least = next((d for d, c in enumerate(counts) if c >= MIN_FIRST_ITEMS), len(counts) - 1)
    fit = [d for d in range(least, len(counts)) if counts[d] <= max_items]
    deepest = min(fit[-1] if fit else least, MAX_OPEN_DEPTH - 1)
    return [d + 1 for d in range(deepest, min(least, deepest) - 1, -1)]


class Viewport(msgspec.Struct, frozen=True):
    """The window onto the drawing: its size in pixels, the least readable zoom (the view's fonts decide it), and
    the pixels at its left an overlay covers (the framing keeps the start clear of them)."""

    width: float
    height: float
    readable: float
    inset: float = 0.0

    @property
    def known(self) -> bool:
        """Whether the widget is laid out: a smaller viewport is a placeholder nobody should judge by."""
        return self.width >= MIN_ROOM_PX and self.height >= MIN_ROOM_PX

    def fits(self, width: float, height: float) -> bool:
        """Whether a drawing of this size (scene points) fits whole with every label readable, margins kept; an
        unknown viewport takes anything."""
        if not self.known:
            return True
        room_w, room_h = self.width - 2 * START_MARGIN, self.height - 2 * START_MARGIN
        return width * self.readable <= room_w and height * self.readable <= room_h


class Frame(msgspec.Struct, frozen=True):
    """Where to look: the zoom, and the scene rectangle the viewport shows at it. `whole`: the drawing fits at a
    readable zoom (the view fits it whole rather than placing this rectangle)."""

    scale: float
    shown: Rect
    whole: bool = False

    @property
    def center(self) -> tuple[float, float]:
        x, y, w, h = self.shown
        return x + w / 2, y + h / 2


def whole_scale(drawing: Rect, viewport: Viewport) -> float:
    """The zoom that fits the whole drawing in the viewport (at most 1: small drawings are not blown up)."""
    _, _, w, h = drawing
    return min(1.0, viewport.width / max(w, 1.0), viewport.height / max(h, 1.0))


def start_frame(drawing: Rect, start: list[Rect], start_inputs: int, viewport: Viewport) -> Frame:
    """The first view: the whole drawing if it stays readable; otherwise where the program starts (its inputs and
    the items they feed, as many as fit, grown from an input so the view never opens past them) at a readable zoom,
    up to 1:1 when that region is small, the region at the top."""
    return _frame(drawing, start, start_inputs, viewport, zoom_in=True)


def fit_frame(drawing: Rect, start: list[Rect], start_inputs: int, viewport: Viewport) -> Frame:
    """Fit: the whole drawing if it stays readable; otherwise zoomed out to the legibility floor, scrolled so the
    start shows at the top (centred across the drawing when it is narrow enough), nothing collapsed."""
    return _frame(drawing, start, start_inputs, viewport, zoom_in=False)


def _frame(drawing: Rect, start: list[Rect], start_inputs: int, viewport: Viewport, zoom_in: bool) -> Frame:
    dx, dy, dw, dh = drawing
    scale = whole_scale(drawing, viewport)
    if scale >= viewport.readable:
        return Frame(scale, (dx + dw / 2 - viewport.width / scale / 2, dy + dh / 2 - viewport.height / scale / 2,
                             viewport.width / scale, viewport.height / scale), whole=True)
    floor = viewport.readable
    inset = viewport.inset if viewport.width - viewport.inset >= 2 * viewport.inset else 0.0
    room_w = max(1.0, viewport.width - inset - 2 * START_MARGIN)
    room_h = max(1.0, viewport.height - 2 * START_MARGIN)
    rects = start or [(dx, dy, dw, 1.0)]  # nothing to anchor on: the top of the drawing
    region = densest_region(rects, room_w / floor, room_h / floor, rects[:start_inputs])
    rx, ry, rw, rh = region
    scale = max(floor, min(1.0, room_w / max(rw, 1.0), room_h / max(rh, 1.0))) if zoom_in else floor
    across = rx + rw / 2
    if not zoom_in and dw * scale <= room_w:
        across = dx + dw / 2  # the whole width shows: centred on the drawing, not on its start
    # the region's top just under the top edge, centred across what the overlay leaves free (the flow runs down
    # from there); the view may scroll past the drawing's edge for that, so a narrow start at the drawing's side is
    # not pushed aside
    w, h = viewport.width / scale, viewport.height / scale
    left = across - (inset + (viewport.width - inset) / 2) / scale
    return Frame(scale, (left, ry - START_MARGIN / scale, w, h))


def densest_region(rects: list[Rect], max_w: float, max_h: float, seeds: list[Rect] | None = None) -> Rect:
    """The region, at most max_w x max_h, that holds the most of `rects` (the program's start, inputs first).
    Grown greedily from each of `seeds` (the inputs; else every rect) in turn; ties go to the earlier seed."""
    best: tuple[int, Rect] | None = None
    for seed in seeds or rects:
        region, count = seed, 1
        for r in rects:
            if r is seed:
                continue
            wider = _union(region, r)
            if wider[2] <= max_w and wider[3] <= max_h:
                region, count = wider, count + 1
        if best is None or count > best[0]:
            best = (count, region)
    return best[1] if best else (0.0, 0.0, 0.0, 0.0)


def _union(a: Rect, b: Rect) -> Rect:
    x0, y0 = min(a[0], b[0]), min(a[1], b[1])
    x1, y1 = max(a[0] + a[2], b[0] + b[2]), max(a[1] + a[3], b[1] + b[3])
    return (x0, y0, x1 - x0, y1 - y0)


def below(layout: SceneLayout, shown: Rect) -> list[str]:
    """The boxes (ops, collapsed groups) that reach below the shown rectangle, top to bottom, by the name the
    drawing gives them: a leaf module's path (`fc`), a group's (`layer4`), else the node's name (`output`)."""
    bottom = shown[1] + shown[3]
    boxes: list[tuple[float, str]] = []
    for n in layout.nodes:
        if n.kind == "node" and n.y + n.h > bottom:
            boxes.append((n.y, _name(n)))
    for g in layout.groups:
        if not g.expanded and g.y + g.h > bottom:
            boxes.append((g.y, _name(g)))
    boxes.sort()
    return [name for _, name in boxes]


def _name(box: NodeBox | GroupBox) -> str:
    if isinstance(box, GroupBox):
        return box.path
    return box.module or box.node


def below_text(names: list[str]) -> str:
    """What Fit says when the drawing is taller than the window at the smallest readable zoom: how many boxes are
    below, down to the last ones (the program's end), and how to reach them."""
    if not names:
        return "Fit: everything expanded is shown, labels readable"
    noun = "box" if len(names) == 1 else "boxes"
    return (f"Fit: {len(names)} {noun} below, down to {' and '.join(names[-2:])}, at the smallest readable size "
            f"(labels {MIN_LABEL_PX:.0f} px): scroll down, or collapse groups (Collapse All, the depth box) to see "
            "more at once")


class Settle(Enum):
    """What the stepping up a level is for: nothing, the first view, or the user's Fit."""

    NONE = "none"
    FIRST = "first"
    FIT = "fit"


class Framing(msgspec.Struct):
    """One graph level's framing state: the shallower levels left to try while a drawing does not fit readably, and
    whether the expansion shown is still the view's own or the user's (then Fit never collapses it)."""

    settling: Settle = Settle.NONE
    depths: list[int] = msgspec.field(default_factory=list)  # shallower depths still to try, the next first
    users: bool = False  # the user changed the expansion since the level was first shown

    @classmethod
    def first_view(cls, candidates: list[int]) -> Framing:
        """A level just opened at `candidates[0]` (`first_depths`), the shallower candidates still to try."""
        return cls(Settle.FIRST, list(candidates[1:]))

    def user_changed(self) -> None:
        """The user expanded or collapsed something: the expansion is theirs, and any stepping up is over."""
        self.users = True
        self.settling = Settle.NONE
        self.depths = []

    def settle(self, width: float, height: float, viewport: Viewport) -> int | None:
        """A drawing of this size was laid out: the depth to lay out instead (one level shallower), or None to show
        it (it fits readably, no shallower candidate is left, or nothing is stepping)."""
        if self.settling is Settle.NONE:
            return None
        if viewport.fits(width, height) or not self.depths:
            self.settling = Settle.NONE
            self.depths = []
            return None
        return self.depths.pop(0)

    def fit(self, width: float, height: float, depth: int, viewport: Viewport) -> int | None:
        """Fit was asked for on a drawing of this size, expanded to `depth`: the depth to step up to while the
        expansion is the view's own and does not fit; None to frame what is shown (`fit_frame`)."""
        if self.users or depth <= 1 or viewport.fits(width, height):
            return None
        self.settling = Settle.FIT
        self.depths = list(range(depth - 1, 0, -1))
        return self.depths.pop(0)
