"""The graph's right-click menu: copy a node's name, target or shape, expand or collapse its group, show it in the
Code panel, find its users; for a group, expand or collapse it and copy its path. Given the document's model and what
the entries that are not the model's do (`MenuActions`, the document's); this module only builds the menu."""
from __future__ import annotations

from collections.abc import Callable

import msgspec
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.graph.ids import group_of
from pt2_viewer.core.graph.navigation import enclosing_group
from pt2_viewer.core.model.program import NodeOp


class MenuActions(msgspec.Struct, frozen=True):
    """The entries the document carries out: the readable Fit, Show in Code, Find Users, Open Subgraph (by node)."""

    fit: Callable[[], None]
    show_in_code: Callable[[str], None]
    find_users: Callable[[str], None]
    open_subgraph: Callable[[str], None]


def copy_text(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


def item_menu(model: DocumentModel, item: str, actions: MenuActions, parent: QWidget) -> QMenu:
    """The menu for a node (its name), a group (its id) or the background ("")."""
    menu = QMenu(parent)
    level = model.level
    path = group_of(item)
    if path is not None:
        group = next((g for g in level.index.modules.walk() if g.path == path), None)
        expanded = model.is_expanded(path)
        menu.addAction("Collapse Group" if expanded else "Expand Group", lambda: model.toggle_group(path))
        menu.addAction("Copy Module Path", lambda: copy_text(group.module if group and group.module else path))
        class_name = group.class_name if group is not None else ""
        if class_name:
            menu.addAction("Copy Module Class", lambda: copy_text(class_name))
        return menu
    node = level.graph.node_by_name.get(item) if item else None
    if node is None:
        menu.addAction("Fit", actions.fit)  # the readable Fit, as Ctrl+0 and the toolbar do
        menu.addAction("Expand All Groups", model.expand_all)
        menu.addAction("Collapse All Groups", model.collapse_all)
        return menu
    menu.addAction("Copy Name", lambda: copy_text(node.name))
    if node.op is NodeOp.CALL_FUNCTION:
        menu.addAction("Copy Target", lambda: copy_text(node.target))
    shape = level.index.output_types.get(node.name)
    if shape:
        menu.addAction(f"Copy Shape ({shape if len(shape) < 40 else shape[:39] + '…'})", lambda: copy_text(shape))
    menu.addSeparator()
    menu.addAction("Show in Code", lambda: actions.show_in_code(node.name))
    users = level.index.users.get(node.name, ())
    find = menu.addAction(f"Find Users ({len(users)})", lambda: actions.find_users(node.name))
    find.setEnabled(bool(users))
    group = enclosing_group(level.index, node.name)
    if group is not None and group.path in level.scene.leaves:  # a module of one op is that op's box: the one
        group = group.parent if group.parent is not None and group.parent.path else None  # around it collapses
    if group is not None:
        menu.addAction(f"Collapse Group '{group.title}'", lambda: model.toggle_group(group.path))
    if model.subgraphs_of(node.name):
        menu.addAction("Open Subgraph", lambda: actions.open_subgraph(node.name))
    return menu
