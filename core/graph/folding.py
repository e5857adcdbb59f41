"""Which nodes the graph draws inside another node's box rather than as boxes of their own.

A program's parameters, buffers, lifted constants and constant tensors are placeholders; each feeds, nearly always,
one op (a convolution's weight, a batch norm's running mean). Drawn as nodes they outnumber the ops and spread every
BatchNorm across the width as five boxes; drawn as rows of the op that uses them (`weight  f32[64, 3, 7, 7]`, as
Netron does) the graph reads as the chain it is. They stay nodes of the document: selecting, finding and walking
reach them; only the drawing folds them.

- One user, an op (not the output): a row of that op.
- No user (BatchNorm's `num_batches_tracked` in eval mode): a row of the first op of the module it belongs to,
  marked unused, when that module has an op of its own; else it stays a node.
- No user because it is tied (GPT-2's `lm_head.weight` is `transformer.wte.weight`; T5's `shared`, both
  `embed_tokens` and `lm_head` are one tensor): torch keeps one placeholder of the tied tensor in use and leaves the
  others with no user. Such a weight is used, through its twin: it is a row `(tied to lm_head.weight)`, of its own
  module's first op, else of the first op its twin feeds; never "unused", never an orphan box. The archive says
  which weights are tied: they are stored in one file (`WeightTargets.tied`). Names of one tensor folded into
  one box are one row naming each (`weight = shared.weight (tied to lm_head.weight)`).
- Several users: it stays a node (a hub's users draw it as a `↳` reference).

A module group whose only drawn item is one op (its weights folded into it) is a *leaf*: the scene draws it as that
op's box titled with the module (`conv1: Conv2d`) instead of a frame around one box.
"""
from __future__ import annotations

import msgspec

from pt2_viewer.core.graph.index import GraphIndex, ModuleGroup
from pt2_viewer.core.model.program import InputKind, NodeOp, Program

_FOLDABLE = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR, InputKind.CUSTOM_OBJ)


class Folding(msgspec.Struct):
    """`host`: folded node -> the node whose box draws it; `rows`: host -> its folded nodes in graph order;
    `labels`: folded node -> the row's name (its target, relative to the host's module when inside it);
    `unused`: the folded nodes that feed nothing; `tied`: folded node -> the target of the tied weight that is
    used in its place; `drawn_as`: a folded node with no row of its own, one tensor with that row."""

    host: dict[str, str] = msgspec.field(default_factory=dict)
    rows: dict[str, list[str]] = msgspec.field(default_factory=dict)
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    unused: set[str] = msgspec.field(default_factory=set)
    tied: dict[str, str] = msgspec.field(default_factory=dict)
    drawn_as: dict[str, str] = msgspec.field(default_factory=dict)  # folded node -> the row of its box that is the same
    # tensor and draws it (one tensor, one row, every name in it)


class WeightTargets(dict[str, str]):
    """placeholder name -> target (`layer1.0.conv1.weight`) for the program's parameters, buffers and constants,
    and `tied`: placeholder with no user -> the placeholder of the same tensor that the graph uses instead."""

    def __init__(self, targets: dict[str, str], tied: dict[str, str]) -> None:
        super().__init__(targets)
        self.tied = tied


def weight_targets(program: Program) -> WeightTargets:
    """The program's parameters, buffers and constants, and which of them are tied (`tied_weights`)."""
    targets = {s.name: s.target for s in program.signature.inputs if s.target and s.kind in _FOLDABLE}
    return WeightTargets(targets, tied_weights(program, targets))


def tied_weights(program: Program, targets: dict[str, str]) -> dict[str, str]:
    """Placeholders of one tensor under several names: each one the graph does not use -> the first that it uses.
    Tied weights are one file of the archive (torch saves a shared tensor once), at one offset, of one shape."""
    stored = {w.name: w for w in program.weights + program.constants}
    by_file: dict[str, list[str]] = {}  # only names that share a file can be one tensor: the rest need no key
    for name, target in targets.items():
        w = stored.get(target)
        if w is not None:
            by_file.setdefault(w.path, []).append(name)
    shared = [names for names in by_file.values() if len(names) > 1]
    if not shared:
        return {}
    used = {e.src for e in program.graph.edges}
    out: dict[str, str] = {}
    for same_file in shared:
        by_tensor: dict[str, list[str]] = {}
        for name in same_file:
            by_tensor.setdefault(_json_key(stored[targets[name]].meta_json), []).append(name)
        for names in by_tensor.values():
            twin = next((n for n in names if n in used), None)
            if twin is not None:
                out.update({n: twin for n in names if n not in used})
    return out


def _json_key(meta: object) -> str:
    """Offset and shape of a stored tensor, as one comparable string (two views of a file are not one weight)."""
    if not isinstance(meta, dict):
        return ""
    return repr((meta.get("storage_offset"), meta.get("sizes"), meta.get("strides")))


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
    tied: dict[str, str] = getattr(index.targets, "tied", {})
    for name, target in index.targets.items():
        node = by_name.get(name)
        if node is None or node.op is not NodeOp.PLACEHOLDER:
            continue
        used = users.get(name, ())
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
            twin = tied.get(name)
            if twin is not None:
                host = host or next((u for u in users.get(twin, []) if by_name[u].op is NodeOp.CALL_FUNCTION), None)
                out.tied[name] = index.targets.get(twin, twin)
            elif host is not None:
                out.unused.add(name)
        if host is None:
            continue
        out.host[name] = host
        out.rows.setdefault(host, []).append(name)
        module = (by_name[host].module_path or "") + "."
        label = target[len(module):] if module != "." and target.startswith(module) else target
        out.labels[name] = label + (f" (tied to {out.tied[name]})" if name in out.tied else "")
    _one_row_per_tensor(out, tied)
    return out


def _one_row_per_tensor(out: Folding, tied: dict[str, str]) -> None:
    """Rows of one box that are one tensor (T5's `embedding` draws `encoder.embed_tokens.weight` and `shared.weight`,
    both tied to `lm_head.weight`) become one row naming each of them: `weight = shared.weight (tied to
    lm_head.weight)`. The row is the tensor in use when the box holds it, else the name in the box's own module;
    the others are `drawn_as` it."""
    for host, rows in out.rows.items():
        by_tensor: dict[str, list[str]] = {}
        for name in rows:
            by_tensor.setdefault(tied.get(name, name), []).append(name)
        for twin, names in by_tensor.items():
            if len(names) < 2:
                continue
            own = {n: out.labels[n].removesuffix(f" (tied to {out.tied[n]})" if n in out.tied else "") for n in names}
            names.sort(key=lambda n: own[n].count("."))  # the box's own module's name first (`weight`)
            row = twin if twin in names else names[0]
            suffix = f" (tied to {out.tied[row]})" if row in out.tied else ""
            out.labels[row] = " = ".join(dict.fromkeys(own[n] for n in names)) + suffix
            out.drawn_as.update({n: row for n in names if n != row})
        out.rows[host] = [n for n in rows if n not in out.drawn_as]


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
