"""What a window's graph shows, as data: the `OUT.json` that `--screenshot OUT.png` writes beside the picture.

Read from the very items that painted the picture, so tests and users' own automation can check the picture
against it: which nodes, groups, weight rows and `↳` references are on screen, where (in the PNG's pixels), under
which label, and how high that label is drawn. Format (one object):

- `tab`: the file shown (the current tab's file), `zoom`: the graph's scale (1.0 is 1:1);
- `items`: every item at least partly on screen, each `{name, kind, label, box, label_px, visible}`: `name` the
  node's or the group's (its module path), `kind` one of `node`, `group`, `weight_row`, `reference`, `box`
  `[x, y, w, h]` in pixels of the PNG, `label_px` the label's drawn height in pixels (0 when the zoom draws the item
  without text), `visible` whether the item is wholly on screen (inside the graph's viewport, not under the
  minimap).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtWidgets import QWidget

from pt2_viewer.app.graph.items import GroupItem, NodeItem, ProxyItem, WeightRowItem

if TYPE_CHECKING:
    from pt2_viewer.app.document.widget import DocumentWidget

KINDS = ("node", "group", "weight_row", "reference")


def describe_window(window: QWidget, shown_file: str | None, docs: list[DocumentWidget],
                    pixel_ratio: float = 1.0) -> dict[str, Any]:
    """The view description of `window` showing `docs` (the current tab's graphs: one, or a comparison's two)."""
    items: list[dict[str, Any]] = []
    zoom = 0.0
    for doc in docs:
        if not doc.isVisible():
            continue
        view = doc.view
        zoom = zoom or view.transform().m11()
        items.extend(describe_view(window, doc, pixel_ratio))
    return {"tab": shown_file, "zoom": round(zoom, 4), "items": items}


def describe_view(window: QWidget, doc: DocumentWidget, pixel_ratio: float = 1.0) -> list[dict[str, Any]]:
    """The items of one document's graph that are at least partly on screen, in `window`'s pixels."""
    view = doc.view
    port = view.viewport()
    lod = view.transform().m11()
    origin = port.mapTo(window, QPoint(0, 0))
    screen = QRect(0, 0, port.width(), port.height())
    # the minimap is a child of the view, painted over the graph's corner
    covered = [QRect(port.mapFrom(view, w.geometry().topLeft()), w.size()) for w in (doc.minimap,) if w.isVisible()]
    out: list[dict[str, Any]] = []
    entries: list[tuple[NodeItem | GroupItem | ProxyItem, str, str, str, QRectF]] = []
    for name, node in view.nodes.items():
        kind = "weight_row" if isinstance(node, WeightRowItem) else "node"
        label = node.label if isinstance(node, WeightRowItem) else node.title
        entries.append((node, name, kind, label, node.rect))
    for path, group in view.groups.items():
        entries.append((group, path, "group", group.box.title, group.rect))
    for proxy in view.proxies:
        entries.append((proxy, proxy.hub, "reference", proxy.text, proxy.rect))
    for item, name, kind, label, rect in entries:
        box = view.mapFromScene(item.mapRectToScene(rect)).boundingRect()
        if not box.intersects(screen):
            continue
        wholly = screen.contains(box) and not any(c.intersects(box) for c in covered)
        x, y = (box.x() + origin.x()) * pixel_ratio, (box.y() + origin.y()) * pixel_ratio
        out.append({"name": name, "kind": kind, "label": label,
                    "box": [round(x), round(y), round(box.width() * pixel_ratio), round(box.height() * pixel_ratio)],
                    "label_px": round(item.label_px(lod) * pixel_ratio, 2), "visible": wholly})
    return out


__all__ = ["KINDS", "describe_view", "describe_window"]
