"""Which nodes the graph draws inside another node's box rather than as boxes of their own.

A program's parameters, buffers, lifted constants and constant tensors are placeholders; each feeds, nearly always,
one op (a convolution's weight, a batch norm's running mean). Drawn as nodes they outnumber the ops and spread every
BatchNorm across the width as five boxes; drawn as rows of the op that uses them (`weight  f32[64, 3, 7, 7]`, as
Netron does) the graph reads as the chain it is. They stay nodes of the document: selecting, finding and walking
reach them; only the drawing folds them.

- One user, an op (not the output): a row of that op.
- No user (BatchNorm's `num_batches_tracked` in eval mode): a row of the first op of the module it belongs to,
  marked unused, when that module has an op of its own; else it stays a node.
- Several users: it stays a node (a hub's users draw it as a `↳` reference).

A module group whose only drawn item is one op (its weights folded into it) is a *leaf*: the scene draws it as that
op's box titled with the module (`conv1: Conv2d`) instead of a frame around one box.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pt2_viewer.core.graph.index import GraphIndex, ModuleGroup
from pt2_viewer.core.model.program import InputKind, NodeOp, Program

_FOLDABLE = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR, InputKind.CUSTOM_OBJ)


@dataclass
class Folding:
    """`host`: folded node -> the node whose box draws it; `rows`: host -> its folded nodes in graph order;
    `labels`: folded node -> the row's name (its target, relative to the host's module when inside it);
    `unused`: the folded nodes that feed nothing."""

    host: dict[str, str] = field(default_factory=dict)
    rows: dict[str, list[str]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    unused: set[str] = field(default_factory=set)


def weight_targets(program: Program) -> dict[str, str]:
    """The program's parameters, buffers and constants: placeholder name -> target (`layer1.0.conv1.weight`)."""
    return {s.name: s.target for s in program.signature.inputs if s.target and s.kind in _FOLDABLE}


def folding_of(index: GraphIndex, groups: list[ModuleGroup]) -> Folding:
    """The folding of `index`'s graph: `index.targets` names the placeholders that may fold (parameters, buffers,
    constants: the signature inputs with a target); `groups` is every module group (for the unused ones' module)."""
    graph = index.graph
    by_name = graph.node_by_name
    users = index.users
    out = Folding()
    if not index.targets:
        return out
    group_of: dict[str, ModuleGroup] = {n: g for g in groups for n in g.nodes}
    first_op: dict[int, str | None] = {}
    for name, target in index.targets.items():
        node = by_name.get(name)
        if node is None or node.op is not NodeOp.PLACEHOLDER:
            continue
        used = users.get(name, [])
        host: str | None = None
        if len(used) == 1:
            user = by_name.get(used[0])
            if user is not None and user.op is NodeOp.CALL_FUNCTION:
                host = user.name
        elif not used:
            g = group_of.get(name)
            if g is not None and g.path:
                if id(g) not in first_op:
                    first_op[id(g)] = next((n for n in g.nodes if by_name[n].op is NodeOp.CALL_FUNCTION), None)
                host = first_op[id(g)]
                if host is not None:
                    out.unused.add(name)
        if host is None:
            continue
        out.host[name] = host
        out.rows.setdefault(host, []).append(name)
        module = (by_name[host].module_path or "") + "."
        out.labels[name] = target[len(module):] if module != "." and target.startswith(module) else target
    return out


def leaf_groups(index: GraphIndex, groups: list[ModuleGroup], folding: Folding) -> dict[str, str]:
    """Module groups drawn as their one op's box: no child groups, and one node left once weights fold, an op.
    Maps the group's path to that op's name. The root is never a leaf."""
    by_name = index.graph.node_by_name
    out: dict[str, str] = {}
    for g in groups:
        if not g.path or g.children:
            continue
        drawn = [n for n in g.nodes if n not in folding.host]
        if len(drawn) == 1 and by_name[drawn[0]].op is NodeOp.CALL_FUNCTION:
            out[g.path] = drawn[0]
    return out
