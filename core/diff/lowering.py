"""What lowering to ExecuTorch is expected to do, told apart from what it is not: the diff's `lowered` kind.

Between a program and its own `.pte` nearly every node differs, because that is what lowering does: an op becomes its
`.out` kernel (`relu` -> `relu.out`), a view its `_copy` (`permute` -> `permute_copy.out`), ops are taken into a
delegate (`relu` -> `delegate_0_0`), a decomposition makes several kernels of one op, a static view is planned away
by the memory planner, and the weights become the `.pte`'s constants. Each of these is a node change of the kind
`lowered`, counted apart and drawn quietly, so what lowering was not expected to do stands out: an output whose dtype
changed stays `changed`, an op gone with nothing made of it stays `removed`, a node nothing made stays `added`.

Only a diff whose program B is a `.pte` (dialect `EXECUTORCH`) has lowered nodes. Each gets its reason in words.
"""
from __future__ import annotations

from pt2_viewer.core.compare.mapping import NodeMapping
from pt2_viewer.core.diff.facts import NodeFacts, ProgramFacts
from pt2_viewer.core.diff.matcher import PROVENANCE, PROVENANCE_LINKS, Matching
from pt2_viewer.core.diff.nodes import ADDED, CHANGED, LOWERED, REMOVED, NodeChange
from pt2_viewer.core.model.program import NodeOp

PTE_DIALECT = "EXECUTORCH"
DELEGATE_PREFIX = "delegate."  # a `.pte`'s delegate call: `delegate.XnnpackBackend`
# views a `.pte` need not run: the memory planner gives their output the input's memory
PLANNED_VIEWS = frozenset({"view", "reshape", "_unsafe_view", "unflatten", "flatten", "alias", "detach",
                           "lift_fresh_copy"})
WEIGHT_KEYS = ("PARAMETER:", "BUFFER:", "CONSTANT_TENSOR:")  # a placeholder's `input_key` prefixes


def is_lowering(fb: ProgramFacts) -> bool:
    """B is a `.pte`: lowering's expected changes are `lowered`, not `changed`."""
    return fb.program.dialect == PTE_DIALECT


def mark_lowered(changes: list[NodeChange], fa: ProgramFacts, fb: ProgramFacts, m: Matching,
                 mapping: NodeMapping | None) -> None:
    """Turn each change that lowering was expected to make into `lowered`, with its reason (in place)."""
    if not is_lowering(fb):
        return
    taken: dict[str, list[str]] = {}  # A node -> the `.pte` nodes its provenance names
    for link in mapping.links if mapping is not None else []:
        if link.method in PROVENANCE_LINKS and link.after in fb.by_name:
            taken.setdefault(link.before, []).append(link.after)
    for c in changes:
        reason = _reason(c, fa, fb, m, taken)
        if reason:
            c.kind, c.reason = LOWERED, reason


def _reason(c: NodeChange, fa: ProgramFacts, fb: ProgramFacts, m: Matching, taken: dict[str, list[str]]) -> str:
    if c.kind == CHANGED and c.a is not None and c.b is not None:
        return _pair_reason(fa.by_name[c.a], fb.by_name[c.b], c, m.method.get(c.a) == PROVENANCE)
    if c.kind == ADDED and c.b is not None:
        nb = fb.by_name[c.b]
        if nb.op is NodeOp.PLACEHOLDER:
            return "a constant of the .pte" if (nb.input_key or "").startswith(WEIGHT_KEYS) else ""
        sources = m.origin.get(c.b)
        return f"made by lowering {', '.join(sources)}" if sources else ""
    if c.kind == REMOVED and c.a is not None:
        na = fa.by_name[c.a]
        if na.op is NodeOp.PLACEHOLDER:
            return "a weight the .pte holds as a constant" if (na.input_key or "").startswith(WEIGHT_KEYS) else ""
        into = taken.get(c.a)
        if into:
            return f"taken into {', '.join(dict.fromkeys(_what(fb.by_name[b]) for b in into))}"
        if na.stem in PLANNED_VIEWS:
            return "a static view the memory planner made free (no instruction)"
    return ""


def _pair_reason(na: NodeFacts, nb: NodeFacts, c: NodeChange, by_provenance: bool) -> str:
    """Why a pair's differences are the lowering's own, or "" when one is not (a dtype, or another op unprovenanced)."""
    if "dtype" in c.what or na.op is NodeOp.PLACEHOLDER:
        return ""
    if nb.target.startswith(DELEGATE_PREFIX):
        return f"taken into {_what(nb)}"
    variant = nb.stem in (na.stem, na.stem + "_copy")
    if not by_provenance and (not variant or "shape" in c.what):
        return ""
    if variant:
        return f"its {'_copy view' if nb.stem.endswith('_copy') and not na.stem.endswith('_copy') else 'kernel'} " \
               f"{nb.target}"
    return f"lowered to {nb.target}"


def _what(n: NodeFacts) -> str:
    """'delegate_0_0 (XnnpackBackend)' or 'addmm_3 (aten.addmm.out)'."""
    return f"{n.name} ({n.target.removeprefix(DELEGATE_PREFIX)})"
