"""The exact links the viewer writes into a `.onnx` it made itself (`lower --to onnx`, core/deploy/onnx_lower.py),
read back without torch.

torch's exporter names on each ONNX node the FX node of its own decomposition, which is not always a node of the
`.pt2` (core/onnx/linking.py finds those links by module, op and order). When the viewer exports, it follows each
FX node's `from_node` to the `.pt2` node it was made from and writes the answer on the ONNX node:
`pkg.pt2_viewer.source_nodes`, the source nodes it computes, comma-separated in the source's order, those a rewrite
rule fused into it included (a Conv that took in its BatchNorm names `conv2d,batch_norm`). The model's metadata names
the source (`pkg.pt2_viewer.source`: `model.pt2 [model]`). Those links are exact; every other node falls back to
linking.py's, marked approximate where it says so.
"""
from __future__ import annotations

from pt2_viewer.core.model.program import Graph, NodeOp
from pt2_viewer.core.onnx.linking import source_links
from pt2_viewer.core.onnx.provenance import SourceLink

SOURCE_NODES = "pkg.pt2_viewer.source_nodes"
MODEL_SOURCE = "pkg.pt2_viewer.source"
_MAX_NAMES = 1000  # a hostile file's list is cut here


def join_names(names: list[str]) -> str:
    return ",".join(dict.fromkeys(names))


def split_names(text: str) -> list[str]:
    return [name for name in text.split(",", _MAX_NAMES)[:_MAX_NAMES] if name.strip()]


def viewer_links(onnx_graph: Graph) -> dict[str, list[str]]:
    """ONNX node (the Program's name) -> the source nodes the viewer's export wrote on it; empty for any other
    file."""
    out: dict[str, list[str]] = {}
    for node in onnx_graph.nodes:
        text = node.metadata.get(SOURCE_NODES)
        if text and node.op is NodeOp.CALL_FUNCTION:
            out[node.name] = [name.strip() for name in split_names(text)]
    return out


def links_to_source(onnx_graph: Graph, source: Graph) -> dict[str, list[SourceLink]]:
    """ONNX node -> its links into `source` (a program's top graph): the viewer's own, exact, where the file has
    them and they name nodes `source` has; else linking.py's (approximate where it says so)."""
    modules = {n.name: n.module_path for n in source.nodes}
    exact = {onnx: [SourceLink(s, modules[s]) for s in names if s in modules]
             for onnx, names in viewer_links(onnx_graph).items()}
    out = {onnx: links for onnx, links in exact.items() if links}
    for onnx, found in source_links(onnx_graph, source).items():
        if onnx not in out and found.node is not None:
            out[onnx] = [found]
    return out


__all__ = ["MODEL_SOURCE", "SOURCE_NODES", "join_names", "links_to_source", "split_names", "viewer_links"]
