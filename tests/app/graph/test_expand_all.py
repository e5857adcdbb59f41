"""Expand all through the real window on a real 32-layer nn.TransformerEncoder export (it opens collapsed): the
groups on screen are laid out first (their requests head the layout queue), the 32 identical layers cost one layout
per distinct shape, and the status line says how many groups opened and how long their layout took."""
from __future__ import annotations

import re

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.layout.records import LayoutRequest, dumps
from tests.app.graph.test_graph_tools import TIMEOUT, open_and_wait
from tests.programs import pt2_path  # noqa: F401  (fixture)


def inside(path: str, groups: list[str]) -> bool:
    return any(path == g or path.startswith((f"{g}.", f"{g}#")) for g in groups)


def test_expand_all_lays_out_the_groups_on_screen_first_once_per_shape_and_says_how_long(  # type: ignore[no-untyped-def]
        qtbot, window: MainWindow, pt2_path) -> None:
    doc = open_and_wait(qtbot, window, pt2_path("deep_encoder"))
    view, scene = doc.view, doc.model.level.scene
    closed = [p for p in scene.groups if not doc.model.is_expanded(p) and p not in scene.leaves]  # leaves: ops
    boxes = sorted((p for p in view.groups if not view.groups[p].box.expanded), key=lambda p: (p.count("."), p))
    target = boxes[len(boxes) // 2]
    view.fitInView(view.groups[target].sceneBoundingRect())  # zoomed in on one collapsed layer
    on_screen = view.groups_in_view()
    assert target in on_screen and len(on_screen) < len(view.groups)

    service = window.layouts.service
    sent: list[list[tuple[str, str]]] = []  # per ticket: each request's group and shape
    submit = service.submit

    def recording(requests: list[LayoutRequest]) -> int:
        sent.append([(r.key_hint, dumps(r.shape())) for r in requests])
        return submit(requests)

    service.submit = recording  # type: ignore[method-assign]
    statuses: list[str] = []
    doc.status.connect(statuses.append)
    before = (service.asked, service.reused, service.cache_hits, service.laid_out)
    with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
        doc.expand_all()

    assert scene.in_view == frozenset(on_screen)
    paths = [path for path, _shape in sent[0]]
    first = [inside(path, on_screen) for path in paths]
    assert any(first) and not all(first), paths
    assert first == sorted(first, reverse=True), f"the groups inside {on_screen} first: {paths}"

    asked, reused, hits, laid_out = (b - a for a, b in zip(before, (service.asked, service.reused, service.cache_hits,
                                                                     service.laid_out), strict=True))
    shapes = sum(len({shape for _path, shape in ticket}) for ticket in sent)
    assert asked == sum(len(ticket) for ticket in sent) and reused == asked - shapes
    assert hits + laid_out == shapes, "each distinct shape once: from the disk cache or from Graphviz"
    assert reused >= 31, "the 32 identical layers: one layout each round for all of them"

    match = re.fullmatch(r"Expanded (\d+) groups \((\d+) of (\d+) module groups open\), laid out in (\d+\.\d) s",
                         statuses[-1])
    assert match, statuses[-1]
    assert int(match[1]) == len(closed), "every group that was closed"
    assert match[2] == match[3], "all open, counted as the report counts them: groups that open, not one-op modules"
    assert all(view.groups[p].box.expanded for p in view.groups)
