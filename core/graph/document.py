"""One open program as the window sees it: the graph level being shown (the top graph or a HOP subgraph reached
through a breadcrumb), its expansion (which module groups are open) and layouts, the selection, search matches, and
the highlight states the graph view paints. No Qt: the document widget mirrors this model.

The model owns that state and announces each change to its subscribers (`subscribe`), so a view that shows it
repaints whoever changed it: a panel marking a symbol's users, the find bar, a comparison linking counterparts.
Expanding or collapsing module groups is such a change too (`Expansion`, saying which groups and to what), so the
context menu, the depth box, Find's reveal and Fit all go through the model and no view reaches into another's
expansion state. Whether the first view or Fit steps up a level is core/graph/framing.py's, asked per level here.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum

import msgspec

from pt2_viewer.core.graph.drawing import EdgeLine, node_label, node_subtitle
from pt2_viewer.core.graph.folding import weight_targets
from pt2_viewer.core.graph.framing import Framing, Viewport
from pt2_viewer.core.graph.highlight_state import HighlightState
from pt2_viewer.core.graph.ids import group_of, is_group
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.program_context import ProgramContext
from pt2_viewer.core.graph.scene import SceneModel, group_id
from pt2_viewer.core.model.node_kinds import input_kinds, node_kind
from pt2_viewer.core.model.program import Archive, Graph, Program

SELECTED, NEIGHBOUR, MATCH = HighlightState.SELECTED, HighlightState.NEIGHBOUR, HighlightState.MATCH


class DocumentChange(Enum):
    """What a subscriber is told changed."""
    LEVEL = "level"  # another graph level is shown (a subgraph entered, the breadcrumb followed)
    HIGHLIGHT = "highlight"  # the selection, the search matches or the marked nodes
    DRAWING = "drawing"  # how the graph is drawn changed (weights as nodes or as rows): lay it out again


class ExpansionCause(Enum):
    """Why groups were expanded or collapsed: what a view does with its viewport after laying out again."""
    GROUP = "group"  # one group toggled (the group, its context menu): the view stays where it is
    REVEAL = "reveal"  # a node's groups opened to show it (Find, history, arrow keys): the view stays, then centres
    OVERVIEW = "overview"  # expand all, collapse all, a depth: the drawing is shown afresh
    HISTORY = "history"  # Back or Forward put an earlier expansion back: the view stays, then shows the selection
    FIT = "fit"  # Fit stepping up from the view's own expansion (a new place in history): shown afresh
    SETTLE = "settle"  # the first view, or Fit, stepping on to a level that fits readably: shown afresh


USERS = (ExpansionCause.GROUP, ExpansionCause.REVEAL, ExpansionCause.OVERVIEW, ExpansionCause.HISTORY)


class Expansion(msgspec.Struct, frozen=True):
    """Module groups of the current level were expanded or collapsed. `groups` holds each group whose state
    changed, by module path, with its new state (True: expanded); empty when the request changed nothing (the view
    is still laid out again, as asked)."""
    groups: tuple[tuple[str, bool], ...]
    cause: ExpansionCause

    @property
    def keep_view(self) -> bool:
        return self.cause in (ExpansionCause.GROUP, ExpansionCause.REVEAL, ExpansionCause.HISTORY)

    @property
    def stepping(self) -> bool:
        """The first view or Fit stepping up a level (it goes on once this level is laid out)."""
        return self.cause in (ExpansionCause.FIT, ExpansionCause.SETTLE)


DocumentEvent = DocumentChange | Expansion
Subscriber = Callable[[DocumentEvent], None]


class GraphLevel(msgspec.Struct):
    """One level of the breadcrumb: the top graph, or a subgraph entered from a control-flow node."""

    title: str  # breadcrumb label: the program name, or "cond › true_graph_0"
    graph: Graph
    index: GraphIndex
    scene: SceneModel
    framing: Framing  # the first view's stepping up, Fit's, and whether the expansion is the user's


class Look(msgspec.Struct):
    """How an item is labelled: title, subtitle and colour family."""

    title: str
    subtitle: str
    kind: str


class Highlight(msgspec.Struct):
    """What the selection lights up: nodes, groups and edges, and the hub shown."""

    nodes: dict[str, HighlightState] = msgspec.field(default_factory=dict)
    groups: dict[str, HighlightState] = msgspec.field(default_factory=dict)  # by module path
    edges: set[tuple[str, str]] = msgspec.field(default_factory=set)
    hub: str | None = None


class DocumentModel:
    def __init__(self, archive: Archive, program: Program) -> None:
        self.archive = archive
        self.program = program
        self.weights_as_nodes = False  # View > Show Weights as Nodes: parameters and buffers as boxes of their own
        self.levels: list[GraphLevel] = [self._level(program.name, program.graph, weight_targets(program))]
        self.selection: str | None = None  # an item id (core/graph/ids.py); set with `select`
        self._matches: list[str] = []
        self._marked: list[str] = []
        self._kinds = input_kinds(program)
        self._subscribers: list[Subscriber] = []
        self._expansion: tuple[SceneModel, frozenset[str]] | None = None

    # -- announcing changes ------------------------------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call `subscriber(event)` after each change (a `DocumentChange`, or an `Expansion` saying which groups
        opened or closed); returns what ends the subscription."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber) if subscriber in self._subscribers else None

    def changed(self, change: DocumentEvent = DocumentChange.HIGHLIGHT) -> None:
        """Tell the subscribers; subclasses call it when state of their own changes what `highlight` answers."""
        for subscriber in list(self._subscribers):
            subscriber(change)

    @property
    def matches(self) -> list[str]:
        """The search matches of the current level (node names)."""
        return self._matches

    @matches.setter
    def matches(self, nodes: Iterable[str]) -> None:
        self._matches = list(nodes)
        self.changed()

    @property
    def marked(self) -> list[str]:
        """Nodes highlighted by a panel (e.g. the users of a symbol)."""
        return self._marked

    @marked.setter
    def marked(self, nodes: Iterable[str]) -> None:
        self._marked = list(nodes)
        self.changed()

    def _level(self, title: str, graph: Graph, targets: dict[str, str] | None = None) -> GraphLevel:
        index = GraphIndex(graph, targets=targets)
        scene = SceneModel(graph, index, fold_weights=not self.weights_as_nodes)
        return GraphLevel(title, graph, index, scene, Framing.first_view(scene.first_depths))

    def set_weights_as_nodes(self, on: bool) -> None:
        """Draw parameters, buffers and constants as nodes of their own (on) or as rows of the op using them."""
        if on == self.weights_as_nodes:
            return
        self.weights_as_nodes = on
        for level in self.levels:
            level.scene.set_fold_weights(not on)
        self.changed(DocumentChange.DRAWING)

    @property
    def level(self) -> GraphLevel:
        return self.levels[-1]

    def context(self) -> ProgramContext:
        """What the side panels show: this program at the level now shown."""
        return ProgramContext(self.program, self.level.graph, self.level.index, self.archive)

    # -- navigation --------------------------------------------------------------------------------------------
    def enter_subgraph(self, node: str, subgraph: str) -> bool:
        n = self.level.graph.node_by_name.get(node)
        if n is None:
            return False
        for sg in n.subgraphs:
            if sg.name == subgraph:
                self.levels.append(self._level(f"{node} › {subgraph}", sg))
                self.selection = None
                self._matches = []
                self.changed(DocumentChange.LEVEL)
                return True
        return False

    def subgraphs_of(self, node: str) -> list[tuple[str, str]]:
        """The (HOP node, subgraph) pairs a node leads into: a HOP's own subgraphs, or for a `get_attr` of a
        subgraph, the HOP that runs it."""
        graph = self.level.graph
        n = graph.node_by_name.get(node)
        if n is None:
            return []
        if n.subgraphs:
            return [(n.name, sg.name) for sg in n.subgraphs]
        return [(hop.name, sg.name) for hop in graph.nodes for sg in hop.subgraphs if sg.name == node]

    def go_to_level(self, depth: int) -> None:
        del self.levels[max(1, depth + 1):]
        self.selection = None
        self._matches = []
        self.changed(DocumentChange.LEVEL)

    # -- expansion: which module groups of the current level are open ----------------------------------------
    def is_expanded(self, path: str) -> bool:
        return path in self.level.scene.expanded

    def set_expanded(self, path: str, expanded: bool, cause: ExpansionCause = ExpansionCause.GROUP) -> None:
        """Expand (with its ancestors) or collapse one group."""
        self._expand(lambda scene: scene.set_expanded(path, expanded), cause)

    def toggle_group(self, path: str) -> None:
        self.set_expanded(path, not self.is_expanded(path))

    def expand_all(self) -> None:
        self._expand(lambda scene: scene.expand_all(), ExpansionCause.OVERVIEW)

    def collapse_all(self) -> None:
        self._expand(lambda scene: scene.collapse_all(), ExpansionCause.OVERVIEW)

    def expand_to_depth(self, depth: int, cause: ExpansionCause = ExpansionCause.OVERVIEW) -> None:
        """Open every group shallower than `depth` and close the rest (the depth box; Fit with FIT)."""
        self._expand(lambda scene: scene.expand_to_depth(depth), cause)

    def reveal(self, node: str) -> bool:
        """Open the groups hiding `node`; False (and no event) when it is already visible."""
        if self.level.scene.visible_item(node) == node:
            return False
        self._expand(lambda scene: scene.reveal(node), ExpansionCause.REVEAL)
        return True

    def set_expansion(self, expanded: frozenset[str]) -> None:
        """Put back an expansion (Back and Forward): exactly these groups open."""
        self._expand(lambda scene: setattr(scene, "expanded", set(expanded) | {""}), ExpansionCause.HISTORY)

    def expansion(self) -> frozenset[str]:
        """The open groups of the current level, one shared value until they change (history keeps it per place)."""
        scene = self.level.scene
        if self._expansion is None or self._expansion[0] is not scene or self._expansion[1] != scene.expanded:
            self._expansion = (scene, frozenset(scene.expanded))
        return self._expansion[1]

    # -- the first view and Fit (core/graph/framing.py decides; the view asks with its viewport) ------------------
    def settle(self, width: float, height: float, viewport: Viewport) -> bool:
        """A drawing of this size was laid out: while the first view (or Fit) is stepping up and it does not fit
        readably, open one level shallower (announced: laid out again) and answer True; False: show it."""
        depth = self.level.framing.settle(width, height, viewport)
        if depth is None:
            return False
        self.expand_to_depth(depth, ExpansionCause.SETTLE)
        return True

    def fit(self, width: float, height: float, viewport: Viewport) -> bool:
        """Fit asked on a drawing of this size: True when it steps up from the view's own expansion (announced: laid
        out again, settling on); False when the view frames what is expanded (`framing.fit_frame`)."""
        depth = self.level.framing.fit(width, height, self.level.scene.expanded_depth(), viewport)
        if depth is None:
            return False
        self.expand_to_depth(depth, ExpansionCause.FIT)
        return True

    def _expand(self, change: Callable[[SceneModel], bool | None], cause: ExpansionCause) -> bool:
        """Apply `change` to the level's expansion and announce what it changed; a change answering False did
        nothing and is not announced. A change the user asked for makes the expansion theirs (Fit keeps it)."""
        scene = self.level.scene
        before = set(scene.expanded)
        if change(scene) is False:
            return False
        if cause in USERS:
            self.level.framing.user_changed()
        after = scene.expanded
        groups = tuple(sorted([(p, True) for p in after - before] + [(p, False) for p in before - after]))
        self.changed(Expansion(groups, cause))
        return True

    # -- what to draw ------------------------------------------------------------------------------------------
    def looks(self, names: Iterable[str] | None = None) -> dict[str, Look]:
        """How each node looks (all nodes of the level, or just `names`: the visible ones)."""
        graph = self.level.graph
        nodes = graph.nodes if names is None else [graph.node_by_name[n] for n in names]
        return {n.name: Look(node_label(n), node_subtitle(n, graph), node_kind(n, self._kinds)) for n in nodes}

    def edge_labeller(self) -> Callable[[EdgeLine], str]:
        """What an edge of the current level carries, e.g. `f32[s77, 3]` (`+2` when it bundles more values). Asked
        for only by edges drawn close enough to read, so a 10k-node program does not parse every shape up front."""
        values = self.level.graph.values

        def label(edge: EdgeLine) -> str:
            v = values.get(edge.values[0])
            if v is None:
                return ""
            return v.type_text + (f" +{len(edge.values) - 1}" if len(edge.values) > 1 else "")

        return label

    # -- selection ---------------------------------------------------------------------------------------------
    def select(self, item: str | None) -> None:
        """Select a node (or a collapsed group by its id, core/graph/ids.py)."""
        self.selection = item
        self.changed()

    def highlight(self) -> Highlight:
        level = self.level
        scene, index = level.scene, level.index
        h = Highlight()
        for name in self.marked:
            _mark(h, scene.visible_item(name), MATCH)
        for name in self.matches:
            _mark(h, scene.visible_item(name), MATCH)
        sel = self.selection
        if sel is None:
            return h
        if is_group(sel):
            _mark(h, sel, SELECTED)
            return h
        if sel in index.hubs:
            h.hub = sel
        me = scene.visible_item(sel)
        for other in [*index.producers.get(sel, []), *index.users.get(sel, [])]:
            it = scene.visible_item(other)
            if it != me:
                _mark(h, it, NEIGHBOUR)
                h.edges.add((it, me) if other in index.producers.get(sel, []) else (me, it))
        _mark(h, me, SELECTED)
        return h


def _mark(h: Highlight, item: str, state: HighlightState) -> None:
    path = group_of(item)
    if path is not None:
        h.groups[path] = max(h.groups.get(path, HighlightState.NONE), state)
    else:
        h.nodes[item] = state if state is HighlightState.SELECTED else max(h.nodes.get(item, HighlightState.NONE),
                                                                             state)


__all__ = ["DocumentChange", "DocumentEvent", "DocumentModel", "Expansion", "ExpansionCause", "GraphLevel", "Highlight",
           "HighlightState", "Look", "group_id"]
