"""Ids of the items the graph view draws: a node (its name) or a module group (`group:PATH`).

One module makes and reads them, so no model, view or test parses the prefix itself. An id stays a plain string
(a `NewType`): layout requests, Graphviz and Qt signals carry it as one, and a node name is its own id.
"""
from __future__ import annotations

from typing import NewType

ItemId = NewType("ItemId", str)

_GROUP = "group:"


def node_item(name: str) -> ItemId:
    """The id of a node drawn on its own."""
    return ItemId(name)


def group_item(path: str) -> ItemId:
    """The id of a module group's box or frame (`""` is the root)."""
    return ItemId(_GROUP + path)


def group_of(item: str | None) -> str | None:
    """The module path of a group's id; None for a node's id (or no id)."""
    if item is not None and item.startswith(_GROUP):
        return item[len(_GROUP):]
    return None


def is_group(item: str | None) -> bool:
    return group_of(item) is not None


def node_of(item: str | None) -> str | None:
    """The node name of a node's id; None for a group's id (or no id)."""
    return item if item is not None and not item.startswith(_GROUP) else None


__all__ = ["ItemId", "group_item", "group_of", "is_group", "node_item", "node_of"]
