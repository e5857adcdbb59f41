"""Back and forward through where the user has been in one document: the graph level (the trail of subgraph drills
from the top graph), which module groups were open there, and the selection. No Qt: the document widget records each
move and applies what `back()` and `forward()` return, as a browser does with its history.

Expanding is a move like selecting: after Expand all, a depth, a group's toggle or Fit's stepping up, Back puts the
groups open before back. Groups opened only to show a node (Find, the arrow keys) belong to that selection's place
(`amend`), so Back from it closes them again with the selection.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec

from pt2_viewer.core.model.program import Graph

MAX_PLACES = 500


class Place(msgspec.Struct, frozen=True):
    """A graph level, as the (HOP node, subgraph) drills that lead there from the top graph, the selection (a node
    name, a collapsed group's id, or None), and the module groups open there (None: not recorded)."""

    trail: tuple[tuple[str, str], ...] = ()
    selection: str | None = None
    expanded: frozenset[str] | None = None


class History:
    """A list of places and a cursor. `visit` records a new place (dropping the places ahead of the cursor, as a
    browser drops its forward pages); `back` and `forward` move the cursor and return the place to show."""

    def __init__(self, start: Place | None = None) -> None:
        self.places: list[Place] = [start or Place()]
        self.cursor = 0

    @property
    def current(self) -> Place:
        return self.places[self.cursor]

    def visit(self, place: Place, amend: bool = False) -> None:
        """Record `place`; with `amend`, as the current place's own change (the groups a reveal opened, the first
        view settling on its level), not a new one."""
        if place == self.current:
            return
        cur = self.current
        if amend and cur.trail == place.trail:
            self.places[self.cursor] = place
            return
        del self.places[self.cursor + 1:]
        if cur.trail == place.trail and cur.selection is None and cur.expanded == place.expanded:
            self.places[self.cursor] = place  # a selection on a level just entered replaces the bare level
        else:
            self.places.append(place)
        if len(self.places) > MAX_PLACES:
            del self.places[: len(self.places) - MAX_PLACES]
        self.cursor = len(self.places) - 1

    def can_go_back(self) -> bool:
        return self.cursor > 0

    def can_go_forward(self) -> bool:
        return self.cursor < len(self.places) - 1

    def back(self) -> Place | None:
        if not self.can_go_back():
            return None
        self.cursor -= 1
        return self.current

    def forward(self) -> Place | None:
        if not self.can_go_forward():
            return None
        self.cursor += 1
        return self.current


class HasGraph(Protocol):
    graph: Graph


def trail_of(levels: Sequence[HasGraph]) -> tuple[tuple[str, str], ...]:
    """The (HOP node, subgraph) drills that lead from the first level to the last: each level is an object with a
    `graph` (core/graph/document.py's GraphLevel), found among its parent graph's nodes' subgraphs."""
    out: list[tuple[str, str]] = []
    for parent, child in zip(levels, levels[1:], strict=False):
        found = next(((n.name, sg.name) for n in parent.graph.nodes for sg in n.subgraphs if sg is child.graph), None)
        if found is None:
            break
        out.append(found)
    return tuple(out)
