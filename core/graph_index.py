"""Questions the views ask of a graph, answered once per graph: who uses a value, which module made a node, which
nodes are hubs, which nodes match a search, which nodes' shapes use a symbol.

The module tree comes from each node's `nn_module_stack`; nodes without one (placeholders, output, asserts added by
export) sit at the root. Hubs are nodes that feed many consumers (attention masks, rotary tables, symbolic sizes,
shared constants): their long edges are what makes Graphviz slow, so views draw them as local references instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from core.lazy import lazy

from core.program import Graph, Node, NodeOp

HUB_MIN_CONSUMERS = 8


@dataclass
class ModuleGroup:
    path: str  # "layers.0.attn"; "" for the root
    class_name: str  # "torch.nn.modules.linear.Linear" (short form via .short_class)
    parent: ModuleGroup | None = None
    children: list[ModuleGroup] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)  # names of nodes made directly in this module
    depth: int = 0

    @property
    def short_class(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]

    @property
    def title(self) -> str:
        name = self.path.rsplit(".", 1)[-1] if self.path else "(model)"
        return f"{name}: {self.short_class}" if self.class_name else name

    def count(self) -> int:
        """Nodes in this group and all its descendants."""
        return len(self.nodes) + sum(c.count() for c in self.children)

    def walk(self) -> list[ModuleGroup]:
        out = [self]
        for c in self.children:
            out.extend(c.walk())
        return out

    def ancestors(self) -> list[ModuleGroup]:
        out, g = [], self.parent
        while g is not None:
            out.append(g)
            g = g.parent
        return out


@dataclass(frozen=True)
class SearchHit:
    node: str
    field: str  # "name", "target" or "module"
    text: str


class GraphIndex:
    """`owners` maps placeholder names to the module path that owns them (a parameter `p_blocks_0_qkv_weight` of
    target `blocks.0.qkv.weight` belongs to `blocks.0.qkv`): such inputs are drawn inside their module."""

    def __init__(self, graph: Graph, owners: dict[str, str] | None = None) -> None:
        self.graph = graph
        self.owners = owners or {}

    @lazy
    def users(self) -> dict[str, list[str]]:
        """node -> the nodes that consume any of its outputs (in graph order, unique)."""
        seen: dict[str, dict[str, None]] = {n.name: {} for n in self.graph.nodes}
        for e in self.graph.edges:
            seen.setdefault(e.src, {})[e.dst] = None
        return {name: list(users) for name, users in seen.items()}

    @lazy
    def producers(self) -> dict[str, list[str]]:
        seen: dict[str, dict[str, None]] = {n.name: {} for n in self.graph.nodes}
        for e in self.graph.edges:
            seen[e.dst][e.src] = None
        return {name: list(producers) for name, producers in seen.items()}

    @lazy
    def hubs(self) -> set[str]:
        """Nodes with so many consumers that drawing every edge would tangle the layout."""
        return {n for n, users in self.users.items() if len(users) >= HUB_MIN_CONSUMERS}

    @lazy
    def modules(self) -> ModuleGroup:
        root = ModuleGroup("", "")
        by_key: dict[tuple[str, ...], ModuleGroup] = {(): root}
        for node in self.graph.nodes:
            scopes = node.module_stack
            # torch puts the root module first with an empty path; it names the model class.
            if scopes and scopes[0].path == "":
                if not root.class_name:
                    root.class_name = scopes[0].class_name
                scopes = scopes[1:]
            key: tuple[str, ...] = ()
            group = root
            for scope in scopes:
                key = key + (scope.key,)
                child = by_key.get(key)
                if child is None:
                    child = ModuleGroup(scope.path, scope.class_name, parent=group, depth=group.depth + 1)
                    group.children.append(child)
                    by_key[key] = child
                group = child
            group.nodes.append(node.name)
        by_path = {g.path: g for g in by_key.values()}
        for name, owner in self.owners.items():
            target = by_path.get(owner)
            if target is not None and target is not root and name in root.nodes:
                root.nodes.remove(name)
                target.nodes.insert(0, name)
        return root

    def search(self, pattern: str, limit: int = 5000) -> list[SearchHit]:
        """Regex (case-insensitive) over node names, targets and module paths. A bad regex matches literally."""
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
            if len(hits) >= limit:
                break
        return hits

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
