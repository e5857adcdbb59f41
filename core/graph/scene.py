"""What the graph view draws, computed without Qt: which items are visible at the current expansion, the layout
requests they need, and the composed scene (boxes, frames, edges, hub proxies) in scene coordinates.

Hierarchical layout: each expanded module group is laid out on its own (its direct nodes plus its child groups as
boxes), bottom-up, so expanding one group re-lays out only that group and its ancestors, and every request is small
enough for Graphviz to answer fast and to cache on disk. Edges from hub nodes are left out of layout requests and
drawn as small proxies beside each consumer. Coordinates are points, y down (Qt scene convention).

Parameters, buffers and constants with one user are drawn as rows of that user's box, and a module holding one op
is drawn as that op's box titled with the module (core/graph/folding.py); both stay nodes of the document.

The composed scene's data (`SceneLayout` and its boxes) is core/graph/drawing.py's; which level the first view opens
at, and what Fit does, is core/graph/framing.py's.

Module trees come from the archive and may be thousands deep (a crafted file): every walk here is a loop, never a
recursion, and a chain of groups that each hold one item is laid out here at once (core/layout/trivial.py) rather
than with one Graphviz round trip per level.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from itertools import takewhile

from pt2_viewer.core.graph.chunks import chunk_large_groups
from pt2_viewer.core.graph.drawing import (
    CHAR_W,
    FRAME_HEADER,
    FRAME_PAD,
    GROUP_BOX_H,
    NODE_H,
    PROXY_H,
    ROW_CHAR_W,
    ROW_H,
    ROW_MAX_W,
    ROW_PAD,
    EdgeLine,
    GroupBox,
    HubProxy,
    NodeBox,
    SceneLayout,
    leaf_title,
    node_label,
    node_subtitle,
    node_width,
    row_type,
)
from pt2_viewer.core.graph.folding import Folding, folding_of, leaf_groups
from pt2_viewer.core.graph.framing import FIRST_VIEW_ITEMS, MAX_OPEN_DEPTH, first_depths
from pt2_viewer.core.graph.ids import group_item, group_of
from pt2_viewer.core.graph.index import GraphIndex, ModuleGroup
from pt2_viewer.core.layout.records import LayoutEdge, LayoutNode, LayoutRequest, LayoutResult
from pt2_viewer.core.layout.trivial import trivial_layout
from pt2_viewer.core.model.program import Graph, NodeOp

START_ITEMS = 12  # the first view frames at most this many items: the inputs and what they feed
MAX_PROXIES = 2  # hub references drawn beside one node


group_id = group_item  # the id of a group's box (core/graph/ids.py)


class SceneModel:
    """Expansion state and layouts of one graph. A layout driver (core/layout/driver.py) calls `pending_requests`
    and feeds results back with `set_layouts`; views draw `compose()` once `ready`."""

    def __init__(self, graph: Graph, index: GraphIndex | None = None, fold_weights: bool = True,
                 leaf_boxes: bool = True) -> None:
        self.graph = graph
        self.index = index or GraphIndex(graph)
        self.root = self.index.modules
        chunk_large_groups(self.root, self.index)
        every = self.root.walk()
        self._every = every
        self.groups: dict[str, ModuleGroup] = {g.path: g for g in every}
        self.counts = _counts(every)
        ops = {n.name for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION}
        self.op_counts = _counts(every, ops.__contains__)
        # node -> the groups containing it, outermost first (one list shared by the nodes of a group)
        self.group_chain: dict[str, list[ModuleGroup]] = {}
        for g in every:
            if g.nodes:
                chain = [*reversed(g.ancestors()), g]
                self.group_chain.update(dict.fromkeys(g.nodes, chain))
        self._widths: dict[str, float] = {}
        hubs = self.index.hubs
        hub_inputs: dict[str, list[str]] = {}
        for e in graph.edges:
            if e.src in hubs and e.src not in hub_inputs.get(e.dst, ()):
                hub_inputs.setdefault(e.dst, []).append(e.src)
        # consumer node -> hubs it reads (drawn as proxies); tuples, which the cyclic collector stops walking (72k
        # nodes read a hub in a 100k-node program)
        self.hub_inputs: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in hub_inputs.items()}
        self.fold_weights = fold_weights
        self.leaf_boxes = leaf_boxes  # modules of one op drawn as that op's box (the report keeps their frames)
        self.folding = Folding()
        self.leaves: dict[str, str] = {}
        self.leaf_of: dict[str, str] = {}
        self.level_edges: dict[str, list[tuple[str, str]]] = {}
        self._generation = 0  # bumped by _derive: node sizes, leaves and edges may have changed
        self._derive()
        self.expanded: set[str] = {""}
        self.layouts: dict[str, LayoutResult] = {}
        self._layout_keys: dict[str, str] = {}
        # path -> (what its request was built from, the request, its key): a round of Expand all asks for every open
        # group's request again, and most are unchanged since the round before (_request_of)
        self._requests: dict[str, tuple[int, list[tuple[bool, LayoutResult | None]], LayoutRequest | None, str]] = {}
        self.first_depths: list[int] = []  # the first view's candidate depths, deepest first (expand_initial)
        self.in_view: frozenset[str] = frozenset()  # groups on screen: theirs are the first requests (lay_out_first)
        self.expand_initial()

    def _derive(self) -> None:
        """What follows from folding weights or not: the folded rows, the leaf modules, each level's edges."""
        self.folding = folding_of(self.index, self._every) if self.fold_weights else Folding()
        leaves = self.fold_weights and self.leaf_boxes
        self.leaves = leaf_groups(self.index, self._every, self.folding) if leaves else {}
        self.leaf_of = {n: path for path, n in self.leaves.items()}
        self.level_edges = self._level_edges()
        self._widths.clear()
        self._generation += 1

    def set_fold_weights(self, on: bool) -> None:
        """Weights as rows of their users (on) or as nodes of their own; the next layout requests follow."""
        if on != self.fold_weights:
            self.fold_weights = on
            self._derive()

    @property
    def notes(self) -> list[str]:
        """What the view should tell the user about this graph beside the drawing (a damaged archive's quirks)."""
        dups = self.index.duplicate_names
        if not dups:
            return []
        named = ", ".join(f"'{d}'" for d in dups[:3]) + (f" and {len(dups) - 3} more" if len(dups) > 3 else "")
        return [f"Several nodes of this archive share a name ({named}); each name is drawn once. The archive is "
                "damaged or hand-made: re-export the model with torch.export.save for a faithful graph."]

    # -- expansion -------------------------------------------------------------------------------------------
    def expand_initial(self, max_items: int = FIRST_VIEW_ITEMS) -> None:
        """Open at the first view's level (core/graph/framing.py decides which: `first_depths`, deepest first; the
        document steps up through them while the drawing does not fit readably); a small program opens flat."""
        self.first_depths = first_depths(self.level_item_counts(), max_items)
        if not self.first_depths:
            self.expanded = {p for p, g in self.groups.items() if g.depth < MAX_OPEN_DEPTH}
            return
        self.expand_to_depth(self.first_depths[0])

    def fall_back(self) -> bool:
        """The first view's level did not fit: open one level shallower, if a candidate is left."""
        if len(self.first_depths) < 2:
            return False
        self.first_depths.pop(0)
        self.expand_to_depth(self.first_depths[0])
        return True

    def level_item_counts(self) -> list[int]:
        """Boxes drawn (nodes, collapsed groups, leaf modules) with the groups of depth d and above expanded (as
        `expand_to_depth(d + 1)` does), for d from 0 (the root's own items) to the depth where everything is open;
        no layout needed."""
        gain: dict[int, int] = {}
        folded = self.folding.host
        for g in self._every:
            if g.path in self.leaves or not (g.children or g.nodes):
                continue
            own = len(g.nodes) - sum(map(folded.__contains__, g.nodes)) + len(g.children) - (1 if g.path else 0)
            gain[g.depth] = gain.get(g.depth, 0) + own
        counts: list[int] = []
        total = 0
        for d in range(max(gain, default=0) + 1):
            total += gain.get(d, 0)
            counts.append(total)
        return counts

    def set_expanded(self, path: str, expanded: bool) -> None:
        if path == "":
            return
        if expanded:
            self.expanded.add(path)
            for a in self.groups[path].ancestors():
                self.expanded.add(a.path)
        else:
            self.expanded.discard(path)

    def expand_all(self) -> None:
        self.expanded = set(self.groups)

    def collapse_all(self) -> None:
        self.expanded = {""}

    def expand_to_depth(self, depth: int) -> None:
        self.expanded = {p for p, g in self.groups.items() if g.depth < depth}

    def expanded_depth(self) -> int:
        """The deepest level to which every module group is expanded (what the depth control shows)."""
        closed = [g.depth for g in self.groups.values() if g.path not in self.expanded and (g.children or g.nodes)]
        return min(closed) if closed else max(g.depth for g in self.groups.values()) + 1

    def reveal(self, node: str) -> None:
        """Expand every group containing `node` (or the box it is a row of) so it is visible."""
        for name in (node, self.folding.host.get(node, node)):
            for g in self.group_chain.get(name, []):
                self.expanded.add(g.path)

    def visible_item(self, node: str) -> str:
        """The visible item that shows `node`: the node itself (a weight's row too, while its host shows) or its
        outermost collapsed group. A leaf module is never collapsed: its box is its op's. A weight drawn in another
        name's row (one tensor, one row) is shown by that row."""
        node = self.folding.drawn_as.get(node, node)
        host = self.folding.host.get(node)
        if host is not None:
            shown = self.visible_item(host)  # a host is never folded itself: one step deep
            return node if shown == host else shown
        for g in self.group_chain.get(node, []):
            if g.path not in self.expanded and g.path not in self.leaves:
                return group_id(g.path)
        return node

    # -- layout requests -------------------------------------------------------------------------------------
    def _level_edges(self) -> dict[str, list[tuple[str, str]]]:
        """For each group, the edges between its direct items (nodes and child groups), from one pass over the
        graph's edges: an edge belongs to the deepest group containing both ends. Hub edges are left out."""
        out: dict[str, dict[tuple[str, str], None]] = {}
        hubs = self.index.hubs
        folded = self.folding.host
        leaves = self.leaves
        root_chain = [self.root]
        for e in self.graph.edges:
            if e.src in hubs or e.src in folded:
                continue
            ca, cb = self.group_chain.get(e.src, root_chain), self.group_chain.get(e.dst, root_chain)
            if ca is cb:  # both ends made in one group (most edges): one list per group, so compared by identity
                if e.src != e.dst:
                    out.setdefault(ca[-1].path, {})[(e.src, e.dst)] = None
                continue
            k = 0
            while k + 1 < len(ca) and k + 1 < len(cb) and ca[k + 1] is cb[k + 1]:
                k += 1
            a = e.src if k + 1 >= len(ca) or ca[k + 1].path in leaves else group_id(ca[k + 1].path)
            b = e.dst if k + 1 >= len(cb) or cb[k + 1].path in leaves else group_id(cb[k + 1].path)
            if a != b:
                out.setdefault(ca[k].path, {})[(a, b)] = None
        return {path: list(edges) for path, edges in out.items()}

    def _box_size(self, g: ModuleGroup) -> tuple[float, float]:
        if g.path in self.expanded:
            r = self.layouts.get(g.path)
            if r is None:
                return (0.0, 0.0)
            return (max(r.width + 2 * FRAME_PAD, CHAR_W * len(g.title) + 40),
                    r.height + 2 * FRAME_PAD + FRAME_HEADER)
        return (max(110.0, CHAR_W * len(g.title) + 56), GROUP_BOX_H)  # room for "▸ " and the bold title

    def _request(self, g: ModuleGroup) -> LayoutRequest | None:
        """The layout request of an expanded group, or None while an expanded child has no layout yet. Every id
        appears once, whatever the archive holds (a node named like a group is drawn as the group)."""
        nodes: list[LayoutNode] = []
        ids: set[str] = set()
        folded = self.folding.host
        for c in g.children:
            leaf = self.leaves.get(c.path)
            if leaf is not None:
                if leaf not in ids:
                    ids.add(leaf)
                    nodes.append(LayoutNode(leaf, self._node_w(leaf) + self._proxy_w(leaf), self._node_h(leaf)))
                continue
            if c.path in self.expanded and c.path not in self.layouts:
                return None
            gid = group_id(c.path)
            if gid not in ids:
                ids.add(gid)
                w, h = self._box_size(c)
                nodes.append(LayoutNode(gid, w, h))
        for n in g.nodes:
            if n not in ids and n not in folded:
                ids.add(n)
                nodes.append(LayoutNode(n, self._node_w(n) + self._proxy_w(n), self._node_h(n)))
        edges = self.level_edges.get(g.path, [])
        return LayoutRequest(nodes=nodes, edges=[LayoutEdge(a, b) for a, b in edges], key_hint=g.path)

    def _request_of(self, g: ModuleGroup) -> tuple[LayoutRequest | None, str]:
        """`_request(g)` and its key, built again only when what it depends on changed: the node sizes and edges
        (`_derive`), and each child group's expansion and layout (compared by identity)."""
        made_of = [(c.path in self.expanded, self.layouts.get(c.path)) for c in g.children]
        known = self._requests.get(g.path)
        if known is not None and known[0] == self._generation and len(known[1]) == len(made_of) and all(
                x[0] == y[0] and x[1] is y[1] for x, y in zip(known[1], made_of)):
            return known[2], known[3]
        req = self._request(g)
        key = request_key(req) if req is not None else ""
        self._requests[g.path] = (self._generation, made_of, req, key)
        return req, key

    def _open_groups(self) -> list[ModuleGroup]:
        """The expanded groups that are visible (every ancestor expanded), each after all the groups inside it."""
        out: list[ModuleGroup] = []
        stack = [self.root]
        while stack:
            g = stack.pop()
            out.append(g)
            stack.extend(c for c in g.children if c.path in self.expanded and c.path not in self.leaves)
        out.reverse()
        return out

    def lay_out_first(self, groups: Iterable[str]) -> None:
        """The groups on screen (the view's, before an expansion): requests of groups inside them come first in
        `pending_requests`, and so in the layout queue."""
        self.in_view = frozenset(groups)

    def _on_screen(self, path: str) -> bool:
        """Whether the group `path` is one of `in_view` or inside one."""
        g: ModuleGroup | None = self.groups.get(path)
        while g is not None:
            if g.path in self.in_view:
                return True
            g = g.parent
        return False

    def pending_requests(self) -> dict[str, LayoutRequest]:
        """Requests that can be sent now (their expanded children are laid out) and are missing or stale, those of
        the groups on screen first (`lay_out_first`). Requests of one item are answered here at once (no Graphviz
        needed), so a chain of such groups costs no round trip."""
        out: dict[str, LayoutRequest] = {}
        for g in self._open_groups():
            req, key = self._request_of(g)
            if req is None:
                continue
            if self._layout_keys.get(g.path) == key:
                continue
            done = trivial_layout(req)
            if done is None:
                out[g.path] = req
            else:
                self.layouts[g.path] = done
                self._layout_keys[g.path] = key
        if self.in_view:
            first = {path: req for path, req in out.items() if self._on_screen(path)}
            out = first | {path: req for path, req in out.items() if path not in first}
        return out

    def set_layouts(self, results: dict[str, tuple[LayoutRequest, LayoutResult]]) -> None:
        for path, (req, res) in results.items():
            self.layouts[path] = res
            self._layout_keys[path] = request_key(req)

    @property
    def ready(self) -> bool:
        return "" in self.layouts and not self.pending_requests()

    # -- composition -----------------------------------------------------------------------------------------
    def compose(self) -> SceneLayout:
        scene = SceneLayout()
        rects: dict[str, tuple[float, float, float, float]] = {}
        routes: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {}
        shown = self._visible_items()
        self._place(scene, rects, routes)
        self._edges(scene, rects, routes, shown)
        root = self.layouts.get("")
        if root is not None:
            scene.width, scene.height = root.width, root.height
        scene.start, scene.start_inputs = self._start(scene, rects, shown)
        return scene

    def _place(self, scene: SceneLayout, rects: dict[str, tuple[float, float, float, float]],
               routes: dict[tuple[str, str], tuple[tuple[float, float], ...]]) -> None:
        """Every laid-out group's items at their scene positions, outer groups before the groups inside them."""
        stack: list[tuple[ModuleGroup, float, float]] = [(self.root, 0.0, 0.0)]
        while stack:
            g, ox, oy = stack.pop()
            r = self.layouts.get(g.path)
            if r is None:
                continue
            for route in r.edges:
                if route.points:
                    pts = [(ox + x, oy + y) for x, y in route.points]
                    if route.head is not None:
                        pts[-1] = (ox + route.head[0], oy + route.head[1])
                    routes[(route.src, route.dst)] = tuple(pts)
            inner: list[tuple[ModuleGroup, float, float]] = []
            for c in g.children:
                leaf = self.leaves.get(c.path)
                if leaf is not None:
                    cx, cy = r.positions.get(leaf, (0.0, 0.0))
                    self._place_node(scene, rects, leaf, ox + cx, oy + cy, g.path, c)
                    continue
                cx, cy = r.positions.get(group_id(c.path), (0.0, 0.0))
                w, h = self._box_size(c)
                x, y = ox + cx - w / 2, oy + cy - h / 2
                expanded = c.path in self.expanded
                scene.groups.append(GroupBox(c.path, c.title, self.counts[c.path], expanded, x, y, w, h, c.depth,
                                             self.op_counts[c.path]))
                rects[group_id(c.path)] = (x, y, w, h)
                if expanded:
                    inner.append((c, x + FRAME_PAD, y + FRAME_PAD + FRAME_HEADER))
            for n in g.nodes:
                if n in self.folding.host:
                    continue  # drawn as a row of its host
                cx, cy = r.positions.get(n, (0.0, 0.0))
                self._place_node(scene, rects, n, ox + cx, oy + cy, g.path, None)
            stack.extend(reversed(inner))

    def _place_node(self, scene: SceneLayout, rects: dict[str, tuple[float, float, float, float]], n: str,
                    cx: float, cy: float, group: str, leaf: ModuleGroup | None) -> None:
        """A node's box centred at (cx, cy) with its proxy column, its weight rows, and, for a leaf module, the
        module's title."""
        w, pw, h = self._node_w(n), self._proxy_w(n), self._node_h(n)
        x, y = cx - (w + pw) / 2, cy - h / 2
        scene.nodes.append(NodeBox(n, x, y, w, h, group, title=leaf_title(leaf, self.graph, n),
                                   module=leaf.path if leaf else ""))
        rects[n] = (x, y, w, h)
        for k, weight in enumerate(self.folding.rows.get(n, ())):
            row = (x + 3, y + NODE_H + k * ROW_H, w - 6, ROW_H)
            scene.nodes.append(NodeBox(weight, *row, group, kind="weight_row", host=n,
                                       title=self.folding.labels.get(weight, weight),
                                       unused=weight in self.folding.unused))
            rects[weight] = row
        for k, hub in enumerate(self.hub_inputs.get(n, [])[:MAX_PROXIES]):
            scene.proxies.append(HubProxy(hub, n, x + w + 4, y + 2 + k * (PROXY_H + 2)))

    def _edges(self, scene: SceneLayout, rects: dict[str, tuple[float, float, float, float]],
               routes: dict[tuple[str, str], tuple[tuple[float, float], ...]], shown: dict[str, str]) -> None:
        hubs = self.index.hubs
        folded = self.folding.host
        lines: dict[tuple[str, str], list[str]] = {}
        for e in self.graph.edges:
            if e.src in hubs or e.src in folded:
                continue  # drawn as proxies beside each consumer, or as rows of it (see _place)
            a, b = shown.get(e.src, e.src), shown.get(e.dst, e.dst)
            if a != b:
                lines.setdefault((a, b), []).append(e.value)
        for (a, b), values in lines.items():
            ra, rb = rects.get(a), rects.get(b)
            if ra is None or rb is None:
                continue
            route = routes.get((a, b), ())
            p0, p1 = ((route[0], route[-1]) if route
                      else ((ra[0] + ra[2] / 2, ra[1] + ra[3]), (rb[0] + rb[2] / 2, rb[1])))
            scene.edges.append(EdgeLine(a, b, tuple(dict.fromkeys(values)), p0, p1, route))

    def _start(self, scene: SceneLayout, rects: dict[str, tuple[float, float, float, float]],
               shown: dict[str, str]) -> tuple[list[tuple[float, float, float, float]], int]:
        """Where the program starts: the items showing its user inputs that feed something (placeholders no module
        owns; else its first op), then the items they feed, breadth first, at most START_ITEMS; then the title bars
        of the frames those items sit in, so the view can show which module they belong to."""
        users = self.index.users
        # a graph's placeholders come first (the reader puts them there), so the walk stops at its first op
        owners = self.index.owners
        inputs = [n.name for n in takewhile(lambda n: n.op is NodeOp.PLACEHOLDER, self.graph.nodes)
                  if n.name not in owners]
        firsts = [n for n in inputs if users.get(n)] or inputs
        if not firsts:
            firsts = [n.name for n in self.graph.nodes if n.op is not NodeOp.PLACEHOLDER][:1]
        feeds: dict[str, list[str]] = {}
        for e in scene.edges:
            feeds.setdefault(e.src, []).append(e.dst)
        order = list(dict.fromkeys(item for item in (shown.get(n, n) for n in firsts) if item in rects))
        n_inputs = len(order)
        seen = set(order)
        i = 0
        while i < len(order) and len(order) < START_ITEMS:
            for item in feeds.get(order[i], []):
                if item not in seen and len(order) < START_ITEMS:
                    seen.add(item)
                    order.append(item)
            i += 1
        frames = {g.path: g for g in scene.groups if g.expanded}
        around: dict[str, None] = {}  # the frame each item sits in
        for item in order:
            path = group_of(item)
            if path is not None:
                parent = self.groups[path].parent
                if parent is not None:
                    around[parent.path] = None
            elif item in self.group_chain:
                inner = self.group_chain[item][-1]
                frame = inner.parent if inner.path in self.leaves else inner
                if frame is not None:
                    around[frame.path] = None
        titles = [(f.x, f.y, min(f.w, CHAR_W * len(f.title) + 40), FRAME_HEADER)
                  for f in (frames.get(path) for path in around) if f is not None]
        return [rects[item] for item in order] + titles, n_inputs

    def _visible_items(self) -> dict[str, str]:
        """`visible_item` for every node hidden in a collapsed group, in one walk of the module tree."""
        out: dict[str, str] = {}
        stack = [self.root]
        while stack:
            g = stack.pop()
            if g.path in self.expanded or g.path in self.leaves:
                stack.extend(g.children)
                continue
            gid = group_id(g.path)
            for inner in g.walk():
                out.update(dict.fromkeys(inner.nodes, gid))
        return out

    def node_size(self, name: str) -> tuple[float, float]:
        """A node's box (without its hub references): room for its text and its weight rows."""
        return self._node_w(name), self._node_h(name)

    def _node_w(self, name: str) -> float:
        """A node's box width: its own text, a leaf module's title, its weight rows."""
        w = self._widths.get(name)
        if w is None:
            w = node_width(self.graph.node_by_name[name], self.graph)
            leaf = self.leaf_of.get(name)
            if leaf is not None:
                w = max(w, min(280.0, CHAR_W * 1.1 * len(leaf_title(self.groups[leaf], self.graph, name)) + 24))
            for weight in self.folding.rows.get(name, ()):
                w = max(w, self._row_w(weight))
            self._widths[name] = w
        return w

    def _row_w(self, weight: str) -> float:
        text = len(self.folding.labels.get(weight, weight)) + len(row_type(self.graph, weight)) + 4
        if weight in self.folding.unused:
            text += len(" (unused)")
        return min(ROW_MAX_W, ROW_CHAR_W * text + 22)

    def _node_h(self, name: str) -> float:
        rows = self.folding.rows.get(name)
        return NODE_H + ROW_H * len(rows) + ROW_PAD if rows else NODE_H

    def _proxy_w(self, name: str) -> float:
        hubs = self.hub_inputs.get(name)
        if not hubs:
            return 0.0
        return 8 + CHAR_W * 0.95 * max(len(h) for h in hubs[:MAX_PROXIES]) + 16


def request_key(req: LayoutRequest) -> str:
    return hashlib.sha1(json.dumps(req.content(), separators=(",", ":")).encode()).hexdigest()


def _counts(groups: list[ModuleGroup], which: Callable[[str], bool] | None = None) -> dict[str, int]:
    """Nodes (those `which` accepts, else all) in each group and its descendants, from a parents-first list of every
    group."""
    counts: dict[str, int] = {}
    for g in reversed(groups):
        own = len(g.nodes) if which is None else sum(map(which, g.nodes))
        counts[g.path] = own + sum(counts[c.path] for c in g.children)
    return counts


# What callers imported from here before the drawing's data and the framing had modules of their own.
__all__ = ["CHAR_W", "GROUP_BOX_H", "MAX_OPEN_DEPTH", "NODE_H", "PROXY_H", "EdgeLine", "GroupBox", "HubProxy",
           "NodeBox", "SceneLayout", "SceneModel", "group_id", "node_label", "node_subtitle", "request_key",
           "row_type"]
