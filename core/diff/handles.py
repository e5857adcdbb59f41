"""The ETRecord's debug handles as the diff's provenance between a program and its `.pte`.

The map `source node -> .pte nodes` is read from the ETRecord by core/deploy/handle_map.py (`etrecord_source_to_pte`,
the one map every view of a lowering uses; the lower job's result `source_to_pte` is the same map).
`pte_provenance` turns it into the diff's provenance (a `NodeMapping` of `debug_handle` links, which
core/diff/matcher.py trusts as it trusts `from_node`) for program A against the `.pte`: A is the program lowered (its
node names are the map's keys), or a program made from it by a pass, such as its core ATen decomposition, whose
nodes' `from_node` name the nodes they came from. Only JSON members are read: nothing is unpickled.
"""
from __future__ import annotations

from pt2_viewer.core.compare.mapping import Link, NodeMapping
from pt2_viewer.core.deploy.handle_map import DEBUG_HANDLE, EtrecordError, etrecord_source_to_pte
from pt2_viewer.core.diff.facts import ProgramFacts
from pt2_viewer.core.model.program import NodeOp, Program

__all__ = ["DEBUG_HANDLE", "EtrecordError", "etrecord_source_to_pte", "pte_provenance"]


def pte_provenance(a: Program, pte: Program, source_to_pte: dict[str, list[str]]) -> NodeMapping:
    """A's nodes linked to the `.pte` nodes computing them: by name when A is the program lowered, else through each
    node's `from_node` (A made from it by a pass: the nearest ancestor the map names)."""
    facts = ProgramFacts(a)
    shown = {n.name for n in pte.graph.nodes}
    links: list[Link] = []
    for n in facts.nodes:
        if n.op is not NodeOp.CALL_FUNCTION:
            continue
        if facts.has_provenance:
            source = next((s for s in n.from_node() if s in source_to_pte), None)
        else:
            source = n.name if n.name in source_to_pte else None
        links += [Link(n.name, p, DEBUG_HANDLE) for p in source_to_pte.get(source or "", []) if p in shown]
    return NodeMapping([n.name for n in a.graph.nodes], [n.name for n in pte.graph.nodes], links, a.name, pte.name)

