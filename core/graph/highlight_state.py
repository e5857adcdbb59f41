"""How the graph view paints an item: one named state instead of bare ints shared by models, views and tests.

Ordered: where several reasons mark one item, the greater state wins (a search match over a neighbour), except that
the selection itself always shows as selected (see core/graph/document.py).
"""
from __future__ import annotations

from enum import IntEnum


class HighlightState(IntEnum):
    NONE = 0
    NEIGHBOUR = 1  # a producer or user of the selection
    SELECTED = 2  # the selection, or what is linked to it (a comparison's counterparts, a hub's proxies)
    MATCH = 3  # a search match, or a node a panel marks (the users of a symbol)


__all__ = ["HighlightState"]
