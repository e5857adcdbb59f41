"""Walking the graph with the keyboard, and where a node sits: no Qt, answered from the graph index.

Up goes to a producer, Down to a user, Left and Right to the selection's siblings (the other users of its producer),
in graph order. Hubs (masks, symbolic sizes) are passed over when there is another choice: stepping up from every
attention op into the mask is rarely where the user means to go. Weights drawn as rows of their op's box (`folded`,
core/graph/folding.py) are never stepped to: Up from an embedding goes to its indices, not into its own weight row
(they stay reachable by click and Find). `Hits` steps through several nodes one at a time
(next/previous through Find's matches, an op-diff row's nodes, Numerics rows).
"""
from __future__ import annotations

from collections.abc import Collection, Iterable

import msgspec

from pt2_viewer.core.graph.index import GraphIndex, ModuleGroup

STEPS = ("up", "down", "left", "right")


def _prefer_non_hub(index: GraphIndex, nodes: Iterable[str], folded: Collection[str] = ()) -> list[str]:
    nodes = [n for n in nodes if n not in folded]
    plain = [n for n in nodes if n not in index.hubs]
    return plain or nodes


def step(index: GraphIndex, node: str, direction: str, folded: Collection[str] = ()) -> str | None:
    """The node an arrow key moves the selection to, or None when there is none that way. `folded`: the nodes drawn
    as rows of another node's box (the scene's `folding.host`), never stepped to."""
    if node not in index.users:
        return None
    if direction == "up":
        producers = _prefer_non_hub(index, index.producers.get(node, []), folded)
        return producers[0] if producers else None
    if direction == "down":
        users = [n for n in index.users.get(node, []) if n not in folded]
        return users[0] if users else None
    if direction in ("left", "right"):
        producers = _prefer_non_hub(index, index.producers.get(node, []), folded)
        if not index.producers.get(node):  # the graph's inputs (a folded weight's row steps to them)
            siblings = [n for n, ps in index.producers.items() if not ps and (n == node or n not in folded)]
        elif producers:
            siblings = list(index.users.get(producers[0], ()))
        else:
            return None
        if node not in siblings or len(siblings) < 2:
            return None
        i = siblings.index(node) + (1 if direction == "right" else -1)
        return siblings[i % len(siblings)]
    raise ValueError(f"unknown direction {direction!r}")


def enclosing_group(index: GraphIndex, node: str) -> ModuleGroup | None:
    """The module group a node was made in directly; None for nodes at the root."""
    for g in index.modules.walk():
        if node in g.nodes:
            return g if g.parent is not None else None
    return None


class Hits(msgspec.Struct):
    """Several nodes to go through one at a time (Find's matches, an op-diff row's nodes, Numerics rows): where the
    user is among them, and the next or previous one, round and round."""

    nodes: list[str]
    label: str = ""  # what they are: "matches of 'conv'", "aten.linear.default", "nodes by error"
    at: int = 0  # -1: none shown yet (marked nodes: next goes to the first, previous to the last)
    marks: bool = False  # the nodes are marked on the graph: putting the hits away unmarks them

    @property
    def current(self) -> str | None:
        return self.nodes[self.at] if self.nodes and self.at >= 0 else None

    def move(self, by: int) -> str | None:
        if not self.nodes:
            return None
        if self.at < 0:
            self.at = 0 if by > 0 else len(self.nodes) - 1
        else:
            self.at = (self.at + by) % len(self.nodes)
        return self.nodes[self.at]

    def text(self) -> str:
        n = len(self.nodes)
        where = "none" if not n else (f"{n} node{'s' if n != 1 else ''}" if self.at < 0 else f"{self.at + 1} of {n}")
        return f"{self.label}: {where}" if self.label else where


# The keys and mouse gestures of the graph itself (the menus' shortcuts are listed from their actions): the
# Help > Keyboard Shortcuts table shows both.
GRAPH_KEYS: tuple[tuple[str, str], ...] = (
    ("Up / Down", "select a producer / a user of the selected node"),
    ("Left / Right", "select the previous / next sibling (another user of the same producer)"),
    ("Enter (in Find)", "the next match"),
    ("Escape (in Find)", "clear the search"),
    ("Click", "select a node or a collapsed group; Details shows it"),
    ("Double-click", "expand or collapse a group; go into a cond/map/while_loop subgraph"),
    ("Right-click", "copy a node's name, target or shape; show it in Code; find its users; collapse its group"),
    ("Wheel / drag", "zoom / pan"),
)
