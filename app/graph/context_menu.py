"""The graph's right-click menu: copy a node's name, target or shape, expand or collapse its group, show it in the
Code panel, find its users; for a group, expand or collapse it and copy its path. What each entry does is the
document's (app/graph/tools.py); this module only builds the menu."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from pt2_viewer.core.graph.ids import group_of
from pt2_viewer.core.graph.navigation import enclosing_group
from pt2_viewer.core.model.program import NodeOp

if TYPE_CHECKING:
    from pt2_viewer.app.graph.document import DocumentWidget


def copy_text(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


def item_menu(doc: DocumentWidget, item: str, parent: QWidget | None = None) -> QMenu:
    """The menu for a node (its name), a group (its id) or the background ("")."""
    menu = QMenu(parent or doc)
    level = doc.model.level
    path = group_of(item)
    if path is not None:
        group = next((g for g in level.index.modules.walk() if g.path == path), None)
        expanded = doc.model.is_expanded(path)
        menu.addAction("Collapse Group" if expanded else "Expand Group", lambda: doc.model.toggle_group(path))
        menu.addAction("Copy Module Path", lambda: copy_text(group.module if group and group.module else path))
        class_name = group.class_name if group is not None else ""
        if class_name:
            menu.addAction("Copy Module Class", lambda: copy_text(class_name))
        return menu
    node = level.graph.node_by_name.get(item) if item else None
    if node is None:
        menu.addAction("Fit", doc.fit)  # the readable Fit, as Ctrl+0 and the toolbar do
        menu.addAction("Expand All Groups", doc.model.expand_all)
        menu.addAction("Collapse All Groups", doc.model.collapse_all)
        return menu
    menu.addAction("Copy Name", lambda: copy_text(node.name))
    if node.op is NodeOp.CALL_FUNCTION:
        menu.addAction("Copy Target", lambda: copy_text(node.target))
    shape = level.index.output_types.get(node.name)
    if shape:
        menu.addAction(f"Copy Shape ({shape if len(shape) < 40 else shape[:39] + '…'})", lambda: copy_text(shape))
    menu.addSeparator()
    menu.addAction("Show in Code", lambda: doc.tools.show_in_code(node.name))
    users = level.index.users.get(node.name, [])
    find = menu.addAction(f"Find Users ({len(users)})", lambda: doc.tools.find_users(node.name))
    find.setEnabled(bool(users))
    group = enclosing_group(level.index, node.name)
    if group is not None and group.path in level.scene.leaves:  # a module of one op is that op's box: the one
        group = group.parent if group.parent is not None and group.parent.path else None  # around it collapses
    if group is not None:
        menu.addAction(f"Collapse Group '{group.title}'", lambda: doc.model.toggle_group(group.path))
    if doc.model.subgraphs_of(node.name):
        menu.addAction("Open Subgraph", lambda: doc.open_subgraph_of(node.name))
    return menu
