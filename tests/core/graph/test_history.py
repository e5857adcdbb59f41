"""Back and forward through selections and subgraph drills (core/graph/history.py)."""
from __future__ import annotations

from pt2_viewer.core.graph.history import History, Place


def test_back_and_forward_like_a_browser() -> None:
    h = History()
    assert h.back() is None and h.forward() is None
    h.visit(Place((), "x"))  # the first selection replaces the bare start
    h.visit(Place((), "cond"))
    h.visit(Place((("cond", "true_graph_0"),), None))
    h.visit(Place((("cond", "true_graph_0"),), "sin"))  # replaces the bare level just entered
    assert len(h.places) == 3
    assert h.back() == Place((), "cond")
    assert h.back() == Place((), "x")
    assert h.back() is None
    assert h.forward() == Place((), "cond")
    h.visit(Place((), "add"))  # a new place drops what was ahead
    assert not h.can_go_forward() and h.current == Place((), "add")
    h.visit(Place((), "add"))  # the same place twice is one entry
    assert h.places == [Place((), "x"), Place((), "cond"), Place((), "add")]
