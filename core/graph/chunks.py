"""Groups with too many direct nodes split into chunks of consecutive nodes, so that no single layout request is
huge (dot's time grows faster than the graph); the chunks are module groups of their own (`path#0`, `path#1`, ...)."""
from __future__ import annotations

from pt2_viewer.core.graph.index import GraphIndex, ModuleGroup
from pt2_viewer.core.model.program import NodeOp

MAX_DIRECT_ITEMS = 300  # a group with more direct nodes is split into chunks of consecutive nodes
CHUNK = 200


def chunk_large_groups(root: ModuleGroup, index: GraphIndex) -> None:
    """Split groups with too many direct nodes into chunks of consecutive nodes, so no single layout is huge."""
    for g in root.walk():
        if len(g.nodes) <= MAX_DIRECT_ITEMS:
            continue
        keep: list[str] = []
        rest: list[str] = []
        for name in g.nodes:
            node = index.graph.node_by_name[name]
            (keep if node.op in (NodeOp.PLACEHOLDER, NodeOp.OUTPUT) and len(keep) < 60 else rest).append(name)
        chunks = []
        for i in range(0, len(rest), CHUNK):
            part = rest[i:i + CHUNK]
            chunk = ModuleGroup(f"{g.path}#{i // CHUNK}" if g.path else f"#{i // CHUNK}",
                                f"nodes {i + 1}-{i + len(part)}", parent=g, depth=g.depth + 1)
            chunk.nodes = part
            chunks.append(chunk)
        g.nodes = keep
        g.children.extend(chunks)
