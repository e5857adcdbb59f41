"""A program's graph as the plain data the report page draws: module groups with their own layouts, nodes with their
looks and details, edges between nodes.

The page expands and collapses module groups without a layout engine, so each group is laid out once here with its
child groups drawn as collapsed boxes (the same requests the window makes, from core/graph's scene model); the page
composes an expanded child by pushing its siblings down and right. As in the window, weights with one user are rows
of that op's box, and a module of one op (a *leaf*, core/graph/folding.py) is that op's box titled with the module
(`conv1: Conv2d`): its parent lays the op out in the module's place, and the page never frames it. Layouts run in
the layout service's child process (core/layout), never in this one, and are cached on disk like the window's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.graph.details import node_details
from pt2_viewer.core.graph.folding import weight_targets
from pt2_viewer.core.graph.index import GraphIndex, ModuleGroup
from pt2_viewer.core.graph.scene import (
    CHAR_W,
    GROUP_BOX_H,
    SceneModel,
    group_id,
    node_label,
    node_subtitle,
)
from pt2_viewer.core.graph.summary import group_count_text
from pt2_viewer.core.layout.records import LayoutEdge, LayoutNode, LayoutRequest, LayoutResult
from pt2_viewer.core.layout.service import LayoutService
from pt2_viewer.core.layout.trivial import trivial_layout
from pt2_viewer.core.model.node_kinds import input_kinds, node_kind
from pt2_viewer.core.model.program import Graph, Program

LAYOUT_TIMEOUT_S = 600.0


@dataclass
class GraphData:
    """JSON-ready: `groups` parents first (index 0 is the root), `nodes`, `edges` as [src, dst] node indices."""

    groups: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[list[int]] = field(default_factory=list)
    open_paths: list[str] = field(default_factory=list)  # groups open when the page loads (as the window opens them)

    def as_json(self) -> dict[str, Any]:
        return {"groups": self.groups, "nodes": self.nodes, "edges": self.edges, "open": self.open_paths}


def collapsed_box(g: ModuleGroup) -> tuple[float, float]:
    """A collapsed group's box, as the window sizes it (room for the arrow and the bold title)."""
    return (max(110.0, CHAR_W * len(g.title) + 56), GROUP_BOX_H)


def group_request(scene: SceneModel, g: ModuleGroup) -> LayoutRequest:
    """The layout of one group's direct items with every child group collapsed; weights folded into the ops that
    use them are rows of those ops' boxes, not items of their own, and a leaf module is its op's box."""
    nodes: list[LayoutNode] = []
    ids: set[str] = set()
    for c in g.children:
        leaf = scene.leaves.get(c.path)
        if leaf is not None:
            if leaf not in ids:
                ids.add(leaf)
                nodes.append(LayoutNode(leaf, *scene.node_size(leaf)))
            continue
        gid = group_id(c.path)
        if gid not in ids:
            ids.add(gid)
            nodes.append(LayoutNode(gid, *collapsed_box(c)))
    for name in g.nodes:
        if name not in ids and name not in scene.folding.host:
            ids.add(name)
            nodes.append(LayoutNode(name, *scene.node_size(name)))
    edges = [LayoutEdge(a, b) for a, b in scene.level_edges.get(g.path, []) if a in ids and b in ids]
    return LayoutRequest(nodes=nodes, edges=edges, key_hint=g.path)


def lay_out_groups(requests: dict[str, LayoutRequest], service: LayoutService | None = None) -> dict[str, LayoutResult]:
    """Every request's layout: one-item requests here, the rest in one batch through the layout service."""
    out: dict[str, LayoutResult] = {}
    batch: list[tuple[str, LayoutRequest]] = []
    for path, req in requests.items():
        done = trivial_layout(req)
        if done is None:
            batch.append((path, req))
        else:
            out[path] = done
    if batch:
        own = service is None
        svc = service or LayoutService()
        try:
            results = svc.wait(svc.submit([r for _, r in batch]), timeout=LAYOUT_TIMEOUT_S)
        finally:
            if own:
                svc.close()
        out.update({path: res for (path, _), res in zip(batch, results)})
    return out


def _details(program: Program, graph: Graph, name: str, scene: SceneModel) -> list[list[Any]]:
    """The details panel's sections as [title, [[label, text, note], ...]]; node links become the node's name."""
    d = node_details(program, graph, name, scene.index)
    return [[s.title, [[r.label, r.text, r.note] for r in s.rows]] for s in d.sections]


def graph_data(program: Program, service: LayoutService | None = None) -> GraphData:
    """The program's top graph, laid out per module group. Raises LayoutError if Graphviz fails."""
    graph = program.graph
    scene = SceneModel(graph, GraphIndex(graph, targets=weight_targets(program)))
    every = scene.root.walk()
    leaves = scene.leaves
    requests = {g.path: group_request(scene, g) for g in every if (g.nodes or g.children) and g.path not in leaves}
    layouts = lay_out_groups(requests, service)
    kinds = input_kinds(program)
    data = GraphData(open_paths=sorted(scene.expanded))
    index_of = {g.path: i for i, g in enumerate(every)}
    for g in every:
        r = layouts.get(g.path)
        w, h = collapsed_box(g)
        items = []
        if r is not None:
            for c in g.children:
                leaf = leaves.get(c.path)
                cx, cy = r.positions.get(group_id(c.path) if leaf is None else leaf, (0.0, 0.0))
                items.append(["g", index_of[c.path], round(cx, 1), round(cy, 1)] if leaf is None
                             else ["n", leaf, round(cx, 1), round(cy, 1)])
            for n in g.nodes:
                if n in scene.folding.host:
                    continue  # a row of its host's box
                cx, cy = r.positions.get(n, (0.0, 0.0))
                items.append(["n", n, round(cx, 1), round(cy, 1)])
        group: dict[str, Any] = {
            "path": g.path, "title": g.title, "cls": g.class_name, "count": scene.counts[g.path],
            "count_text": group_count_text(scene.op_counts[g.path], scene.counts[g.path]),
            "parent": index_of[g.parent.path] if g.parent is not None else -1, "depth": g.depth,
            "cw": round(w, 1), "ch": round(h, 1),
            "lw": round(r.width, 1) if r else 0.0, "lh": round(r.height, 1) if r else 0.0, "items": items,
        }
        if g.path in leaves:
            group["leaf"] = True  # drawn as its op's box (placed by its parent), never a frame or a collapsed box
        data.groups.append(group)
    node_index: dict[str, int] = {}
    folding = scene.folding
    for g in every:
        for name in g.nodes:
            node = graph.node_by_name[name]
            node_index[name] = len(data.nodes)
            w, h = scene.node_size(name)
            entry = {
                "name": name, "label": node_label(node), "sub": node_subtitle(node, graph),
                "kind": node_kind(node, kinds), "target": node.target, "group": index_of[g.path],
                "w": round(w, 1), "h": round(h, 1), "hub": name in scene.index.hubs,
                "details": _details(program, graph, name, scene),
            }
            leaf = scene.leaf_of.get(name)
            if leaf is not None:  # the box is titled with its module; the op's own name is its `op`
                entry["label"], entry["op"] = scene.groups[leaf].title, node_label(node)
            if name in folding.host:
                entry["row"] = folding.labels[name] + (" (unused)" if name in folding.unused else "")
            data.nodes.append(entry)
    for host, rows in folding.rows.items():  # a host lists its rows; each row names its host (indices)
        data.nodes[node_index[host]]["rows"] = [node_index[r] for r in rows]
        for weight in rows:
            data.nodes[node_index[weight]]["host"] = node_index[host]
    for name, row in folding.drawn_as.items():  # one tensor, one row: its other names are found at that row
        data.nodes[node_index[name]]["same"] = node_index[row]
    seen: set[tuple[int, int]] = set()
    for e in graph.edges:
        if e.src in scene.index.hubs or e.src in folding.host:
            continue  # hubs (masks, sizes) are named in their consumers' details, weights are rows of their users
        a, b = node_index.get(e.src), node_index.get(e.dst)
        if a is not None and b is not None and a != b and (a, b) not in seen:
            seen.add((a, b))
            data.edges.append([a, b])
    return data
