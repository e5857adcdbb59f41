"""Classify every node of two matched programs: unchanged, added, removed, or changed, and what changed (and, against
a `.pte`, which of those lowering was expected to make: `lowered`, core/diff/lowering.py).

A pair is changed when its op (target), an output's dtype, an output's shape (compared as expressions in B's symbols,
core/diff/symbols.py), its arguments or constants, or its module path differ. Arguments compare the literals, and
the wiring where both ends were paired: an input that comes from another node's counterpart is a change, one that
comes from an added or removed node is not (that node already says so). A shape that differs only where one side is
static and the other symbolic is flagged `dynamic`, as is an added or removed node that only a symbolic dim makes
(`sym_size`, a range assert).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pt2_viewer.core.diff.facts import NodeFacts, ProgramFacts
from pt2_viewer.core.diff.matcher import Matching
from pt2_viewer.core.diff.symbols import SymbolMap, compare_shapes
from pt2_viewer.core.model.program import NodeOp

ADDED, REMOVED, CHANGED, LOWERED = "added", "removed", "changed", "lowered"
WHAT = ("op", "dtype", "shape", "args", "module")


@dataclass
class NodeChange:
    """One node that differs. `a` or `b` is None for an added or removed node."""

    a: str | None
    b: str | None
    kind: str  # ADDED, REMOVED, CHANGED, or LOWERED (any of those three that lowering was expected to make)
    module: str  # where it sits: B's module path, A's for a removed node (and for any when B records none)
    what: list[str] = field(default_factory=list)  # for CHANGED: a subset of WHAT, in that order
    details: dict[str, tuple[str, str]] = field(default_factory=dict)  # what -> (A's text, B's text)
    dynamic: bool = False  # the change is only static against symbolic (a shape, or a node a symbolic dim makes)
    op: str = ""  # the node's op (B's, A's for a removed node)
    placeholder: bool = False  # an input of the graph: the signature diff reports it too
    reason: str = ""  # for LOWERED: what lowering did, in words ("taken into delegate_0_0 (XnnpackBackend)")

    @property
    def was(self) -> str:
        """What it would be without lowering's excuse: ADDED, REMOVED or CHANGED."""
        if self.kind != LOWERED:
            return self.kind
        return CHANGED if self.a is not None and self.b is not None else ADDED if self.b is not None else REMOVED

    @property
    def side_node(self) -> tuple[str, str]:
        return ("b", self.b) if self.b is not None else ("a", self.a or "")


def classify(fa: ProgramFacts, fb: ProgramFacts, m: Matching, symbols: SymbolMap) -> list[NodeChange]:
    """Every added, removed and changed node, in B's graph order with removed nodes where A had them."""
    pairs = [(fa.by_name[a], fb.by_name[b]) for a, b in m.a_to_b.items()]
    for na, nb in pairs:  # symbols pair by the inputs' dims, then by the symbolic values paired nodes make
        if na.op is NodeOp.PLACEHOLDER:
            symbols.learn(na.outputs, nb.outputs)
    for na, nb in pairs:
        if na.op is not NodeOp.PLACEHOLDER and any(v is not None and v.expr is not None for v in na.values):
            symbols.learn(na.outputs, nb.outputs)
    symbols.pair_by_name()
    modules_b = any(n.module for n in fb.nodes)  # a `.pte` records no module paths: that is no module change
    changes: list[NodeChange] = []
    removed_after: dict[str | None, list[NodeChange]] = {}
    last_b: str | None = None
    for na in fa.nodes:  # a removed node is listed after the B counterpart of the last paired node before it
        b_name = m.a_to_b.get(na.name)
        if b_name is not None:
            last_b = b_name
        else:
            removed_after.setdefault(last_b, []).append(_one_sided(na, REMOVED))
    changes.extend(removed_after.get(None, []))
    for nb in fb.nodes:
        a_name = m.b_to_a.get(nb.name)
        if a_name is None:
            changes.append(_one_sided(nb, ADDED))
        else:
            change = _compare(fa.by_name[a_name], nb, m, symbols, modules_b)
            if change is not None:
                changes.append(change)
        changes.extend(removed_after.get(nb.name, []))
    return changes


def _one_sided(n: NodeFacts, kind: str) -> NodeChange:
    return NodeChange(a=n.name if kind == REMOVED else None, b=n.name if kind == ADDED else None, kind=kind,
                      module=n.module, dynamic=n.dynamic_only, op=n.target, placeholder=n.op is NodeOp.PLACEHOLDER)


def _compare(na: NodeFacts, nb: NodeFacts, m: Matching, symbols: SymbolMap, modules_b: bool = True
             ) -> NodeChange | None:
    details: dict[str, tuple[str, str]] = {}
    if na.target != nb.target and na.op is not NodeOp.PLACEHOLDER:
        details["op"] = (na.target, nb.target)
    if na.raw == nb.raw and symbols.identity:
        pass  # the same metadata, the same symbol names: the same types (no parsing: most pairs of a big diff)
    else:
        _compare_types(na, nb, symbols, details)
    if na.op is not NodeOp.PLACEHOLDER and (na.literal != nb.literal or _rewired(na, nb, m)
                                           or na.subgraph_ops != nb.subgraph_ops):
        details["args"] = (na.literal, nb.literal)
    if modules_b and na.module != nb.module:
        details["module"] = (na.module or "(root)", nb.module or "(root)")
    if not details:
        return None
    what: list[str] = [w for w in WHAT if w in details]
    dynamic = what == ["shape"] and details.pop("dynamic", ("", ""))[0] == "yes"
    details.pop("dynamic", None)
    return NodeChange(a=na.name, b=nb.name, kind=CHANGED, module=nb.module if modules_b else na.module, what=what,
                      details=details, dynamic=dynamic, op=nb.target, placeholder=nb.op is NodeOp.PLACEHOLDER)


def _compare_types(na: NodeFacts, nb: NodeFacts, symbols: SymbolMap, details: dict[str, tuple[str, str]]) -> None:
    """Output dtypes and shapes into `details` ("dynamic": ("yes", "") when the shapes differ only where one side is
    static and the other symbolic)."""
    # another op may well have more outputs (layer_norm -> native_layer_norm): its first ones are compared
    count_differs = len(na.outputs) != len(nb.outputs) and "op" not in details
    if [o.dtype for o in na.outputs] != [o.dtype for o in nb.outputs][:len(na.outputs)] or count_differs:
        details["dtype"] = (_types(na), _types(nb))
    shape_kinds = {compare_shapes(symbols, oa, ob) for oa, ob in zip(na.outputs, nb.outputs)}
    if count_differs:
        shape_kinds.add("shape")
    if shape_kinds - {None}:
        details["shape"] = (_types(na), _types(nb))
        if shape_kinds <= {None, "dynamic"}:
            details["dynamic"] = ("yes", "")


def _types(n: NodeFacts) -> str:
    return ", ".join(o.text for o in n.outputs)


def _rewired(na: NodeFacts, nb: NodeFacts, m: Matching) -> bool:
    """An input now comes from a node other than its old producer's counterpart (both ends paired)."""
    if len(na.producers) != len(nb.producers):
        return False  # the literal (its `%` count) already differs
    for pa, pb in zip(na.producers, nb.producers):
        if pa is None or pb is None:
            continue
        counterpart = m.a_to_b.get(pa)
        if counterpart is not None and pb in m.b_to_a and counterpart != pb:
            return True
    return False
