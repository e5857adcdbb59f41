"""ONNX as a stage of the pipeline: a program | its `.onnx` (or program | core ATen | `.onnx`), each adjacent pair
diffed and each node linked to what it became.

The links are the ONNX file's own metadata (core/onnx/viewer_links.py `links_to_source`): where the viewer made the
export (`lower --to onnx`), the source nodes it wrote on each ONNX node, followed from torch's `from_node` (exact,
method `from_node`); elsewhere torch's exporter's `fx_node` and `name_scopes` as core/onnx/linking.py reads them
(`fx_node` where the link is by name, `onnx_scope` where it is approximate). A core ATen decomposition between them
is linked to the program by torch's `from_node`, and to the `.onnx` through the program: each of its nodes to the
ONNX nodes of the program's node it was made from. Qt-free: app/compare/chain.py shows the chain, as it shows
source | core ATen | `.pte`.
"""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.compare.mapping import Link, NodeMapping
from pt2_viewer.core.diff.chain import Chain, Stage, chain_of, read_stages
from pt2_viewer.core.diff.facts import ProgramFacts
from pt2_viewer.core.model.program import Archive, NodeOp, Program
from pt2_viewer.core.onnx.viewer_links import links_to_source, viewer_links

EXACT, BY_NAME, APPROXIMATE = "from_node", "fx_node", "onnx_scope"  # how a link was made, said in the status line


def onnx_provenance(source: Program, onnx: Program) -> NodeMapping:
    """The source's nodes linked to the ONNX nodes computing them (each link's method: EXACT, BY_NAME or
    APPROXIMATE)."""
    exact = set(viewer_links(onnx.graph))
    links = [Link(k.node, node, EXACT if node in exact else APPROXIMATE if k.approximate else BY_NAME)
             for node, found in links_to_source(onnx.graph, source.graph).items() for k in found if k.node]
    return NodeMapping([n.name for n in source.graph.nodes], [n.name for n in onnx.graph.nodes], links,
                       source.name, onnx.name)


def through_source(core: Program, to_onnx: NodeMapping) -> NodeMapping:
    """A decomposition's nodes linked to the ONNX nodes of the source node each was made from (torch's `from_node`,
    nearest first), each link keeping the source's link's method."""
    by_source: dict[str, list[Link]] = {}
    for k in to_onnx.links:
        by_source.setdefault(k.before, []).append(k)
    links = []
    for n in ProgramFacts(core).nodes:
        if n.op is NodeOp.CALL_FUNCTION:
            source = next((s for s in n.from_node() if s in by_source), n.name if n.name in by_source else None)
            links += [Link(n.name, k.after, k.method) for k in by_source.get(source or "", [])]
    return NodeMapping([n.name for n in core.graph.nodes], to_onnx.after_nodes, links, core.name, to_onnx.after_label)


def onnx_chain(source: Archive, program: Program, onnx: Archive, core: Archive | None = None) -> Chain:
    """Source | ONNX, or source | core ATen | ONNX: each pair diffed, the ONNX stage linked by its file's metadata."""
    last = onnx.program()
    to_onnx = onnx_provenance(program, last)
    stages = [Stage(source, program, f"{Path(source.path).name} [{program.name}]")]
    provenance = []
    if core is not None:
        middle = core.program()
        stages.append(Stage(core, middle, f"core ATen ({Path(core.path).name})"))
        provenance += [None]  # torch's from_node, which the diff's matcher reads from the nodes
        to_onnx = through_source(middle, to_onnx)
    stages.append(Stage(onnx, last, f"ONNX ({Path(onnx.path).name})"))
    return chain_of(stages, [*provenance, to_onnx])


def read_onnx_pipeline(source: Archive, program: Program, onnx_path: str, core_path: str | None = None
                       ) -> Chain | str:
    """The chain of `program` (of `source`), its core ATen decomposition at `core_path` if given, and the `.onnx` at
    `onnx_path`; a one-line message naming the file and the problem when one cannot be read."""
    archives = read_stages([p for p in (core_path, onnx_path) if p])
    if isinstance(archives, str):
        return archives
    return onnx_chain(source, program, archives[-1], archives[0] if core_path else None)


__all__ = ["APPROXIMATE", "BY_NAME", "EXACT", "onnx_chain", "onnx_provenance", "read_onnx_pipeline", "through_source"]
