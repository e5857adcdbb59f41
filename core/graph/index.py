"""Questions the views ask of a graph, answered once per graph: who uses a value, which module made a node, which
nodes are hubs, which nodes match a search, which nodes' shapes use a symbol.

The module tree comes from each node's `nn_module_stack`; nodes without one (placeholders, output, asserts added by
export) sit at the root. A module called several times (ResNet's `relu`, T5's dropout) is one group per call, since
each call sits at its own place in the data flow; the calls after the first get the ids `PATH@1`, `PATH@2`, ... Hubs
are nodes that feed many consumers (attention masks, rotary tables, symbolic sizes, shared constants): their long
edges are what makes Graphviz slow, so views draw them as local references instead.

Module stacks come from the archive and may be thousands deep (a crafted file), so every walk of the tree here is a
loop, never a recursion.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from pt2_viewer.core.model.metadata import ModuleScope
from pt2_viewer.core.model.program import Graph, Node, NodeOp
from pt2_viewer.core.util.lazy import lazy

HUB_MIN_CONSUMERS = 8


@dataclass(eq=False)
class ModuleGroup:
    """One call of one module. `path` is the group's id, unique in its tree: the module path ("layers.0.attn"; ""
    for the root), with `@K` added for the (K+1)-th call of a module called several times. `module` is the module's
    path itself, the same for all its calls."""

    path: str
    class_name: str  # "torch.nn.modules.linear.Linear" (short form via .short_class)
    parent: ModuleGroup | None = None
    children: list[ModuleGroup] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)  # names of nodes made directly in this module
    depth: int = 0
    module: str | None = None  # the module path; None: same as `path`
    call: int = 0  # 0 for the first call of the module, 1 for the second ...

    def __post_init__(self) -> None:
        if self.module is None:
            self.module = self.path

    @property
    def short_class(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]

    @property
    def title(self) -> str:
        name = self.module.rsplit(".", 1)[-1] if self.module else "(model)"
        text = f"{name}: {self.short_class}" if self.class_name else name
        return f"{text} (call {self.call + 1})" if self.call else text

    def count(self) -> int:
        """Nodes in this group and all its descendants."""
        return sum(len(g.nodes) for g in self.walk())

    def walk(self) -> list[ModuleGroup]:
        """This group and every group inside it, parents before children, children in order."""
        out: list[ModuleGroup] = []
        stack = [self]
        while stack:
            g = stack.pop()
            out.append(g)
            stack.extend(reversed(g.children))
        return out

    def ancestors(self) -> list[ModuleGroup]:
        out, g = [], self.parent
        while g is not None:
            out.append(g)
            g = g.parent
        return out


@dataclass(frozen=True)
class SearchHit:
    """A node Find matched, and which of its fields matched."""

    node: str
    field: str  # "name", "target", "module" or "shape"
    text: str


def _grouped(pairs: Iterable[tuple[str, str]], keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each key's partners in the pairs, in order: every key of `keys` (none: `()`), then any other first of a pair.
    Tuples, not lists: a tuple of strings drops out of the cyclic collector's walks once it has been looked at, where
    a list is walked on every full collection for as long as the tab is open (20k lists at 10k nodes)."""
    lists: dict[str, list[str]] = {}
    for k, v in pairs:
        found = lists.get(k)
        if found is None:
            lists[k] = [v]
        else:
            found.append(v)
    out: dict[str, tuple[str, ...]] = dict.fromkeys(keys, ())
    out.update((k, tuple(v)) for k, v in lists.items())
    return out


class GraphIndex:
    """`targets` maps the placeholders of parameters, buffers and constants to their targets (`blocks.0.qkv.weight`);
    `owners` maps them to the module path that owns them (`blocks.0.qkv`, from the targets unless given): such inputs
    are drawn inside their module, folded into the op that uses them (core/graph/folding.py)."""

    def __init__(self, graph: Graph, owners: dict[str, str] | None = None,
                 targets: dict[str, str] | None = None) -> None:
        self.graph = graph
        self.targets = targets or {}
        self.owners = owners if owners is not None else {n: t.rpartition(".")[0] for n, t in self.targets.items()}

    @lazy
    def _links(self) -> dict[tuple[str, str], None]:
        """(producer, consumer) pairs of the graph's edges, each once, in the edges' order: one dict of tuples
        instead of a dict per node (100k nodes: 0.3 -> 0.1 s for users and producers)."""
        return dict.fromkeys((e.src, e.dst) for e in self.graph.edges)

    @lazy
    def users(self) -> dict[str, tuple[str, ...]]:
        """node -> the nodes that consume any of its outputs (in graph order, unique)."""
        return _grouped(self._links, (n.name for n in self.graph.nodes))

    @lazy
    def producers(self) -> dict[str, tuple[str, ...]]:
        return _grouped(((dst, src) for src, dst in self._links), (n.name for n in self.graph.nodes))

    @lazy
    def hubs(self) -> set[str]:
        """Nodes with so many consumers that drawing every edge would tangle the layout."""
        return {n for n, users in self.users.items() if len(users) >= HUB_MIN_CONSUMERS}

    @lazy
    def modules(self) -> ModuleGroup:
        root = ModuleGroup("", "")
        # (parent group, scope key) -> group: a dict step per scope, so a deep stack costs its depth, not its square
        by_key: dict[tuple[int, str], ModuleGroup] = {}
        calls: dict[str, int] = {}  # module path -> calls seen so far
        ids: set[str] = {""}
        placed: set[str] = set()
        # module stack (one tuple per distinct stack: parse_module_stack and the cache share them) -> its group:
        # once a stack has been walked, every step of it exists, so walking it again would only find the same group
        group_of_stack: dict[int, tuple[tuple[ModuleScope, ...], ModuleGroup]] = {}
        for node in self.graph.nodes:
            if node.name in placed:
                continue  # a repeated name (a damaged archive): drawn once, see `duplicate_names`
            placed.add(node.name)
            scopes = node.module_stack
            known = group_of_stack.get(id(scopes))
            if known is not None and known[0] is scopes:
                known[1].nodes.append(node.name)
                continue
            whole = scopes
            # torch puts the root module first with an empty path; it names the model class.
            if scopes and scopes[0].path == "":
                if not root.class_name:
                    root.class_name = scopes[0].class_name
                scopes = scopes[1:]
            group = root
            for scope in scopes:
                child = by_key.get((id(group), scope.key))
                if child is None:
                    call = calls.get(scope.path, 0)
                    calls[scope.path] = call + 1
                    path = scope.path if call == 0 else f"{scope.path}@{call}"
                    while path in ids:  # a module whose own name ends in "@K", or a crafted stack: stay unique
                        path += "'"
                    ids.add(path)
                    child = ModuleGroup(path, scope.class_name, parent=group, depth=group.depth + 1,
                                        module=scope.path, call=call)
                    group.children.append(child)
                    by_key[(id(group), scope.key)] = child
                group = child
            group_of_stack[id(whole)] = (whole, group)
            group.nodes.append(node.name)
        self._place_owned_inputs(root)
        return root

    def _place_owned_inputs(self, root: ModuleGroup) -> None:
        """Move parameters, buffers and constants from the root into a group: their module's own (first call) group,
        or, when that module made no node itself (MultiheadAttention's `out_proj`, whose weights the attention's own
        ops use) or some of their users lie outside it (a tied embedding that `lm_head` owns feeds the encoder and
        the decoder too), the innermost group holding every op that uses them."""
        first_call: dict[str, ModuleGroup] = {}
        group_of: dict[str, ModuleGroup] = {}
        for g in root.walk():
            first_call.setdefault(g.module or "", g)
            group_of.update(dict.fromkeys(g.nodes, g))
        moved: dict[int, tuple[ModuleGroup, list[str]]] = {}
        for name, owner in self.owners.items():
            if group_of.get(name) is not root:
                continue
            target = first_call.get(owner)
            users = [group_of[u] for u in self.users.get(name, []) if u in group_of]
            if target is None or any(not _inside(u, target) for u in users):
                target = _innermost_common(users)
            if target is not None and target is not root:
                moved.setdefault(id(target), (target, []))[1].append(name)
        gone = {n for _, names in moved.values() for n in names}
        if gone:
            root.nodes = [n for n in root.nodes if n not in gone]
        for target, names in moved.values():
            target.nodes[:0] = names

    @lazy
    def duplicate_names(self) -> list[str]:
        """Node names that more than one node of the graph carries (only a damaged or crafted archive has them)."""
        if len(self.graph.node_by_name) == len(self.graph.nodes):
            return []  # one node per name (the index by name holds each name once)
        seen: set[str] = set()
        dups: dict[str, None] = {}
        for n in self.graph.nodes:
            if n.name in seen:
                dups[n.name] = None
            seen.add(n.name)
        return list(dups)

    def search(self, pattern: str, limit: int = 5000) -> list[SearchHit]:
        """Regex (case-insensitive) over node names, targets, module paths and output types (`f32[s27, 3]`, so
        a shape, a dtype or a symbol finds the nodes that carry it). A bad regex matches literally."""
        if not pattern:
            return []
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error:
            rx = re.compile(re.escape(pattern), re.IGNORECASE)
        hits: list[SearchHit] = []
        for n in self.graph.nodes:
            for field_name, text in (("name", n.name), ("target", n.target), ("module", n.module_path)):
                if text and rx.search(text):
                    hits.append(SearchHit(n.name, field_name, text))
                    break
            else:
                shape = self.output_types.get(n.name, "")
                if shape and rx.search(shape):
                    hits.append(SearchHit(n.name, "shape", shape))
            if len(hits) >= limit:
                break
        return hits

    @lazy
    def output_types(self) -> dict[str, str]:
        """node -> its outputs' types as one text, `f32[s27, 3], i64[s27]` (symbols included), for search."""
        values = self.graph.values
        out: dict[str, str] = {}
        for n in self.graph.nodes:
            texts = [values[o].type_text for o in n.outputs if o and o in values and values[o].kind != "graph"]
            if texts:
                out[n.name] = ", ".join(texts)
        return out

    def hit_text(self, hit: SearchHit) -> str:
        """A search result in words: the node, its op and its module, and what matched when that is neither."""
        n = self.graph.node_by_name.get(hit.node)
        if n is None:
            return hit.node
        op = n.op_name if n.op is NodeOp.CALL_FUNCTION else n.op.value
        parts = [f"{n.name}  ·  {op}"]
        if n.module_path:
            parts.append(f"in {n.module_path}")
        if hit.field == "shape":
            parts.append(f"→ {hit.text}")
        return "    ".join(parts)

    @lazy
    def symbol_users(self) -> dict[str, list[str]]:
        """symbol -> nodes whose outputs' shapes or values mention it."""
        out: dict[str, list[str]] = {}
        for n in self.graph.nodes:
            syms: dict[str, None] = {}
            for o in n.outputs:
                v = self.graph.values.get(o) if o else None
                if v is None:
                    continue
                if v.meta is not None:
                    syms.update(dict.fromkeys(v.meta.symbols))
                if v.expr is not None:
                    syms.update(dict.fromkeys(v.expr.symbols))
            for s in syms:
                out.setdefault(s, []).append(n.name)
        return out

    def runtime_asserts(self) -> list[Node]:
        return [n for n in self.graph.nodes if n.op is NodeOp.CALL_FUNCTION and "_assert" in n.target]

    def asserts_for(self, symbol: str) -> list[str]:
        """The messages of runtime asserts that mention a symbol ("u0 <= 3")."""
        rx = re.compile(rf"\b{re.escape(symbol)}\b")
        out = []
        for n in self.runtime_asserts():
            for a in n.inputs:
                if isinstance(a.value, str) and rx.search(a.value):
                    out.append(a.value)
        return out


def _inside(group: ModuleGroup, outer: ModuleGroup) -> bool:
    g: ModuleGroup | None = group
    while g is not None and g is not outer:
        g = g.parent
    return g is outer


def _innermost_common(groups: list[ModuleGroup]) -> ModuleGroup | None:
    """The deepest group that contains all of `groups` (None for an empty list)."""
    if not groups:
        return None
    common = [*reversed(groups[0].ancestors()), groups[0]]
    for g in groups[1:]:
        chain = [*reversed(g.ancestors()), g]
        k = 0
        while k < len(common) and k < len(chain) and common[k] is chain[k]:
            k += 1
        del common[k:]
    return common[-1] if common else None
