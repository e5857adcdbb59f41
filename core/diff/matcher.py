"""Which node of program A is which node of program B: provenance where torch recorded it, structure elsewhere.

Names are no evidence between two exports: a change early in the model shifts every later name by one (`relu_3`
becomes `relu_4`), which is what today's `guess_mapping` trips on. So the matcher pairs nodes, one to one, by:
1. provenance: a decomposition's mapping file (core/compare/mapping.py), an ETRecord's debug handles between a program
   and its `.pte` (core/diff/handles.py), or the `from_node` metadata torch writes on a node, naming the A node it
   was traced from (when A is an export: see `_by_provenance`); of an A node's several descendants, the one calling
   the same op (else a variant of it, `permute` ~ `permute_copy`; else the last, which makes the value) is its
   counterpart, the others new;
2. placeholders by what the signature says they are (a parameter's target, a user input's position), and the output;
3. within each module call present on both sides, the two op sequences aligned (difflib, the longest common
   subsequences of targets): equal runs pair up, and a replaced run pairs position by position when both sides have
   as many nodes (`relu` became `gelu`), else node by node where the op's stem agrees;
4. graph neighbourhood, for what is left (a node whose module moved): same op, fed by nodes already paired, repeated
   until nothing more pairs.
Every pair records its method, so a view can say how sure it is.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from pt2_viewer.core.compare.mapping import NodeMapping
from pt2_viewer.core.diff.facts import NodeFacts, ProgramFacts
from pt2_viewer.core.model.program import NodeOp

PROVENANCE, SIGNATURE, ALIGNED, NEIGHBOURS = "provenance", "signature", "aligned", "neighbours"
# a mapping's links that are provenance: torch's `from_node`, and the ETRecord's debug handles (core/diff/handles.py)
PROVENANCE_LINKS = frozenset({"from_node", "debug_handle"})


@dataclass
class Matching:
    a_to_b: dict[str, str] = field(default_factory=dict)
    b_to_a: dict[str, str] = field(default_factory=dict)
    method: dict[str, str] = field(default_factory=dict)  # A node -> how it was paired
    origin: dict[str, list[str]] = field(default_factory=dict)  # unpaired B node -> A nodes it came from (provenance)

    def pair(self, a: str, b: str, method: str) -> bool:
        if a in self.a_to_b or b in self.b_to_a:
            return False
        self.a_to_b[a] = b
        self.b_to_a[b] = a
        self.method[a] = method
        return True


def match(fa: ProgramFacts, fb: ProgramFacts, mapping: NodeMapping | None = None) -> Matching:
    m = Matching()
    _by_provenance(fa, fb, mapping, m)
    _by_signature(fa, fb, m)
    _inputs_of_provenance(fa, fb, m)
    _by_alignment(fa, fb, m)
    _by_neighbours(fa, fb, m)
    m.origin = {b: sources for b, sources in m.origin.items() if b not in m.b_to_a}
    return m


def _by_provenance(fa: ProgramFacts, fb: ProgramFacts, mapping: NodeMapping | None, m: Matching) -> None:
    after: dict[str, list[str]] = defaultdict(list)  # A node -> its B descendants, in B's order
    if mapping is not None:
        links = dict.fromkeys((k.before, k.after) for k in mapping.links if k.method in PROVENANCE_LINKS)  # ordered
        by_after: dict[str, list[str]] = defaultdict(list)
        for before, after_name in links:
            by_after[after_name].append(before)
        for n in fb.nodes:
            for a in by_after.get(n.name, ()):
                after[a].append(n.name)
    elif not fa.has_provenance:
        # B's `from_node` surely names A's nodes only when A is an export (no provenance of its own) and B was made
        # from it. When A was itself made by a pass, B's chains name A's ancestors, whose names A's nodes reuse (two
        # decompositions of one model, or a program against itself): those pair by structure.
        for n in fb.nodes:
            for a in n.from_node():
                if a in fa.by_name and n.op is NodeOp.CALL_FUNCTION:
                    after[a].append(n.name)
                    break
    for a_name, bs in after.items():
        source = fa.by_name.get(a_name)
        if source is None:
            continue
        for b in bs:
            m.origin.setdefault(b, []).append(a_name)
        candidates = [fb.by_name[b] for b in bs if b in fb.by_name and b not in m.b_to_a]
        if not candidates:
            continue
        best = next((c for c in candidates if c.target == source.target), None) or \
            next((c for c in candidates if c.stem == source.stem), None) or \
            next((c for c in candidates if c.stem.startswith(source.stem + "_")), None) or candidates[-1]
        m.pair(a_name, best.name, PROVENANCE)


def _by_signature(fa: ProgramFacts, fb: ProgramFacts, m: Matching) -> None:
    keys = {n.input_key: n.name for n in fb.nodes if n.input_key}
    for n in fa.nodes:
        if n.input_key and n.input_key in keys:
            m.pair(n.name, keys[n.input_key], SIGNATURE)
    outs_a = [n.name for n in fa.nodes if n.op is NodeOp.OUTPUT]
    outs_b = [n.name for n in fb.nodes if n.op is NodeOp.OUTPUT]
    for a, b in zip(outs_a, outs_b):
        m.pair(a, b, SIGNATURE)


def _inputs_of_provenance(fa: ProgramFacts, fb: ProgramFacts, m: Matching) -> None:
    """Inputs the signature could not pair (a `.pte`'s constants have names and kinds of their own), paired where
    two nodes paired by provenance read them at the same argument position, of the same dtype and shape."""
    for a_name, how in list(m.method.items()):
        if how != PROVENANCE:
            continue
        a, b = fa.by_name[a_name], fb.by_name[m.a_to_b[a_name]]
        for pa, pb in zip(a.producers, b.producers):
            ia, ib = fa.by_name.get(pa or ""), fb.by_name.get(pb or "")
            if ia is not None and ib is not None and ia.op is NodeOp.PLACEHOLDER and \
                    ib.op is NodeOp.PLACEHOLDER and ia.outputs == ib.outputs:
                m.pair(ia.name, ib.name, NEIGHBOURS)


def _ops_by_group(facts: ProgramFacts, taken: dict[str, str]) -> dict[str, list[NodeFacts]]:
    out: dict[str, list[NodeFacts]] = defaultdict(list)
    for n in facts.nodes:
        if n.op in (NodeOp.CALL_FUNCTION, NodeOp.GET_ATTR) and n.name not in taken:
            out[n.group].append(n)
    return out


def _by_alignment(fa: ProgramFacts, fb: ProgramFacts, m: Matching) -> None:
    groups_a = _ops_by_group(fa, m.a_to_b)
    groups_b = _ops_by_group(fb, m.b_to_a)
    for group, seq_a in groups_a.items():
        seq_b = groups_b.get(group)
        if seq_b:
            _align(seq_a, seq_b, m)


def _align(seq_a: list[NodeFacts], seq_b: list[NodeFacts], m: Matching) -> None:
    sm = SequenceMatcher(None, [n.target for n in seq_a], [n.target for n in seq_b], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for a, b in zip(seq_a[i1:i2], seq_b[j1:j2]):
                m.pair(a.name, b.name, ALIGNED)
        elif tag == "replace":
            _pair_by_stem(seq_a[i1:i2], seq_b[j1:j2], m)


def _pair_by_stem(seq_a: list[NodeFacts], seq_b: list[NodeFacts], m: Matching) -> None:
    """A replaced run of unequal lengths: pair the nodes whose op stems align (`add_` ~ `add`, overloads aside)."""
    sm = SequenceMatcher(None, [n.stem for n in seq_a], [n.stem for n in seq_b], autojunk=False)
    for block in sm.get_matching_blocks():
        for k in range(block.size):
            m.pair(seq_a[block.a + k].name, seq_b[block.b + k].name, ALIGNED)


def _by_neighbours(fa: ProgramFacts, fb: ProgramFacts, m: Matching) -> None:
    """Same op fed by paired nodes, repeated while it pairs more (a chain whose module moved pairs link by link)."""
    for _ in range(8):
        waiting: dict[tuple[str, tuple[str | None, ...]], list[str]] = defaultdict(list)
        for n in fa.nodes:
            if n.name not in m.a_to_b and n.op is not NodeOp.PLACEHOLDER:
                key = (n.target, tuple(m.a_to_b.get(p, "?") if p else None for p in n.producers))
                if "?" not in key[1]:
                    waiting[key].append(n.name)
        paired = 0
        for n in fb.nodes:
            if n.name in m.b_to_a or n.op is NodeOp.PLACEHOLDER:
                continue
            queue = waiting.get((n.target, n.producers))
            if queue and m.pair(queue.pop(0), n.name, NEIGHBOURS):
                paired += 1
        if not paired:
            return
