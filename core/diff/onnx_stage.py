"""ONNX as a stage of the pipeline: a program | its `.onnx`, the pair diffed and each node linked to what it became.

The links are the ONNX file's own metadata (core/onnx/viewer_links.py `links_to_source`): where the viewer made the
export (`lower --to onnx`), the source nodes it wrote on each ONNX node, followed from torch's `from_node` (exact,
method `from_node`); elsewhere torch's exporter's `fx_node` and `name_scopes` as core/onnx/linking.py reads them
(`fx_node` where the link is by name, `onnx_scope` where it is approximate). Qt-free: app/compare/chain.py shows the
chain, as it shows source | core ATen | `.pte`.
"""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.compare.mapping import Link, NodeMapping
from pt2_viewer.core.diff.chain import Chain, Stage, chain_of
from pt2_viewer.core.formats import registry
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.onnx.viewer_links import links_to_source, viewer_links
from pt2_viewer.core.pt2.errors import ArchiveError

EXACT, BY_NAME, APPROXIMATE = "from_node", "fx_node", "onnx_scope"  # how a link was made, said in the status line


def onnx_provenance(source: Program, onnx: Program) -> NodeMapping:
    """The source's nodes linked to the ONNX nodes computing them (each link's method: EXACT, BY_NAME or
    APPROXIMATE)."""
    exact = set(viewer_links(onnx.graph))
    links = [Link(k.node, node, EXACT if node in exact else APPROXIMATE if k.approximate else BY_NAME)
             for node, found in links_to_source(onnx.graph, source.graph).items() for k in found if k.node]
    return NodeMapping([n.name for n in source.graph.nodes], [n.name for n in onnx.graph.nodes], links,
                       source.name, onnx.name)


def onnx_chain(source: Archive, program: Program, onnx: Archive) -> Chain:
    """Source | ONNX: one pair, diffed, linked by the ONNX file's metadata."""
    last = onnx.program()
    stages = [Stage(source, program, f"{Path(source.path).name} [{program.name}]"),
              Stage(onnx, last, f"ONNX ({Path(onnx.path).name})")]
    return chain_of(stages, [onnx_provenance(program, last)])


def read_onnx_pipeline(source: Archive, program: Program, onnx_path: str) -> Chain | str:
    """The chain of `program` (of `source`) and the `.onnx` at `onnx_path`; a one-line message naming the file and
    the problem when it cannot be read."""
    try:
        onnx = registry.read(onnx_path)
    except (ArchiveError, OSError) as e:
        return str(e) if onnx_path in str(e) else f"{onnx_path}: {e}"
    if not onnx.programs:
        return f"{onnx_path}: holds no program graph to compare"
    return onnx_chain(source, program, onnx)


__all__ = ["APPROXIMATE", "BY_NAME", "EXACT", "onnx_chain", "onnx_provenance", "read_onnx_pipeline"]
