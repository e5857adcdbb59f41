"""Sticky, non-overlapping group titles and the breadcrumb (core/graph/title_placement.py), as pure geometry."""
from __future__ import annotations

from pt2_viewer.core.graph.title_placement import Frame, Rect, breadcrumb, place_titles


def width(text: str) -> float:
    return 7.0 * len(text)


def test_a_title_sticks_to_the_top_while_its_frame_is_on_screen() -> None:
    frames = [Frame("layer3", "layer3: Sequential", (40, -300, 600, 900), 1)]
    (t,) = place_titles(frames, 800, 600, 16, 20, width)
    assert t.stuck and t.rect[1] == 20 and t.rect[0] == 46  # under the breadcrumb row, at the frame's left
    scrolled_left = [Frame("layer3", "layer3: Sequential", (-200, 100, 600, 300), 1)]
    (t,) = place_titles(scrolled_left, 800, 600, 16, 20, width)
    assert t.stuck and t.rect[0] == 6 and t.rect[1] == 102  # its left edge scrolled off: the title stays in view
    gone = [Frame("layer3", "layer3: Sequential", (40, -900, 600, 905), 1)]
    assert place_titles(gone, 800, 600, 16, 20, width) == []  # almost off screen: no room for it


def test_nested_stuck_titles_stack_and_never_overlap() -> None:
    frames = [Frame("layer3.2", "2: Bottleneck", (50, -100, 500, 600), 2),
              Frame("layer3", "layer3: Sequential", (40, -300, 600, 900), 1),
              Frame("layer3.2.conv2", "conv2: Conv2d", (60, -10, 300, 400), 3)]
    placed = place_titles(frames, 800, 600, 16, 20, width)
    assert [p.path for p in placed] == ["layer3", "layer3.2", "layer3.2.conv2"]  # outermost first
    assert [p.rect[1] for p in placed] == [20, 37, 54]
    for i, a in enumerate(placed):
        for b in placed[i + 1:]:
            ax, ay, aw, ah = a.rect
            bx, by, bw, bh = b.rect
            assert not (ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah)


def test_a_title_at_its_own_corner_keeps_off_the_nodes() -> None:
    frames = [Frame("g", "encoder: Encoder", (100, 100, 400, 300), 1)]
    def covers(nodes: list[Rect]):  # type: ignore[no-untyped-def]
        return lambda r: any(r[0] < n[0] + n[2] and n[0] < r[0] + r[2] and r[1] < n[1] + n[3] and n[1] < r[1] + r[3]
                             for n in nodes)

    (above,) = place_titles(frames, 800, 600, 16, 20, width, covers([(110, 104, 80, 20)]))
    assert above.rect[1] == 83 and not above.stuck  # just above its frame, off the node
    assert place_titles(frames, 800, 600, 16, 20, width, covers([(110, 104, 80, 20), (110, 80, 80, 10)])) == []
    # an inner frame's title never goes above its frame across the enclosing frame's edge: it would label that one
    nested = [Frame("g", "encoder: Encoder", (100, 100, 600, 300), 1),
              Frame("g.a", "attn: Attention", (400, 108, 250, 200), 2)]
    placed = place_titles(nested, 800, 600, 16, 20, width, covers([(420, 110, 20, 15)]))
    assert [t.path for t in placed] == ["g"]
    assert len(place_titles(frames, 800, 600, 16, 20, width, covers([(110, 150, 80, 20)]))) == 1
    # narrower on screen than a title can use: none
    assert place_titles([Frame("g", "g", (100, 100, 40, 300), 1)], 800, 600, 16, 20, width) == []


def test_breadcrumb_is_the_path_at_the_centre() -> None:
    frames = [Frame("layer3.2", "2: Bottleneck", (50, -100, 500, 600), 2),
              Frame("layer3", "layer3: Sequential", (40, -300, 600, 900), 1),
              Frame("layer4", "layer4: Sequential", (700, 0, 100, 100), 1)]
    assert [f.title for f in breadcrumb(frames, 300, 300)] == ["layer3: Sequential", "2: Bottleneck"]
    assert breadcrumb(frames, 5, 5) == []
