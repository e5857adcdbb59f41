"""The scene model on the bundled example (a real two-layer transformer export with a cond and dynamic dims):
module groups, hubs, expansion, hierarchical layout with real Graphviz, composition."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.graph.ids import group_item
from pt2_viewer.core.graph.scene import SceneModel
from pt2_viewer.core.layout.driver import lay_out_all
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.pt2.reader import read_archive

EXAMPLE = Path(__file__).resolve().parents[3] / "resources" / "examples" / "example.pt2"


@pytest.fixture(scope="module")
def doc() -> DocumentModel:
    archive = read_archive(EXAMPLE)
    return DocumentModel(archive, archive.programs[0])


def lay_out(scene: SceneModel) -> int:
    return lay_out_all(scene, layout)


def overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def test_module_tree_follows_nn_module_stack_and_owns_parameters(doc: DocumentModel) -> None:
    modules = doc.level.index.modules
    assert modules.short_class == "TinyTransformer"
    paths = {g.path for g in modules.walk()}
    assert {"embed", "blocks.0", "blocks.0.attn", "blocks.0.attn.qkv", "blocks.1.mlp.2", "head"} <= paths
    qkv = next(g for g in modules.walk() if g.path == "blocks.0.attn.qkv")
    # The linear and its two parameters sit together in the module that owns them.
    assert set(qkv.nodes) == {"p_blocks_0_attn_qkv_weight", "p_blocks_0_attn_qkv_bias", "linear"}
    assert modules.count() == len(doc.program.graph.nodes)


def test_symbolic_sizes_feeding_every_view_are_hubs(doc: DocumentModel) -> None:
    index = doc.level.index
    assert index.hubs, "the dynamic batch/seq sizes feed every reshape: they must be hubs"
    for hub in index.hubs:
        assert len(index.users[hub]) >= 8
        assert hub.startswith("sym_size")


def test_flat_layout_places_every_node_without_overlap(doc: DocumentModel) -> None:
    scene = doc.level.scene
    scene.expand_all()
    assert lay_out(scene) >= 2  # children before their parents
    composed = scene.compose()
    names = [n.node for n in composed.nodes]
    assert sorted(names) == sorted(n.name for n in doc.program.graph.nodes)
    boxes = [(n.x, n.y, n.w, n.h) for n in composed.nodes if n.kind == "node"]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not overlaps(a, b)
    # Weights with one user are rows inside that user's box, one under another.
    hosts = {n.node: n for n in composed.nodes if n.kind == "node"}
    rows = [n for n in composed.nodes if n.kind == "weight_row"]
    assert {r.node for r in rows} >= {"p_blocks_0_attn_qkv_weight", "p_blocks_0_attn_qkv_bias"}
    for r in rows:
        host = hosts[r.host]
        assert doc.level.index.users[r.node] == (r.host,) or not doc.level.index.users[r.node]
        assert host.x <= r.x and r.x + r.w <= host.x + host.w and host.y + 30 <= r.y and r.y + r.h <= host.y + host.h
    # Each node sits inside the frame of its group.
    frames = {g.path: (g.x, g.y, g.w, g.h) for g in composed.groups}
    for n in composed.nodes:
        if n.group:
            fx, fy, fw, fh = frames[n.group]
            assert fx <= n.x and n.x + n.w <= fx + fw + 0.5 and fy <= n.y and n.y + n.h <= fy + fh + 0.5
    # Hub edges are proxies, not lines.
    hubs = doc.level.index.hubs
    assert composed.proxies and {p.hub for p in composed.proxies} == hubs
    assert not any(e.src in hubs for e in composed.edges)


def test_collapsing_a_group_routes_its_edges_to_the_box(doc: DocumentModel) -> None:
    scene = doc.level.scene
    scene.expand_all()
    scene.set_expanded("blocks.0", False)
    lay_out(scene)
    composed = scene.compose()
    box = next(g for g in composed.groups if g.path == "blocks.0")
    assert not box.expanded and box.count == 35
    assert scene.visible_item("linear") == group_item("blocks.0")
    assert not any(n.group.startswith("blocks.0") for n in composed.nodes)
    ends = {e.src for e in composed.edges} | {e.dst for e in composed.edges}
    assert group_item("blocks.0") in ends
    scene.reveal("linear")
    assert scene.visible_item("linear") == "linear"


def test_expanded_depth_follows_expand_to_depth(doc: DocumentModel) -> None:
    scene = doc.level.scene
    for depth in (1, 2, 3):
        scene.expand_to_depth(depth)
        assert scene.expanded_depth() == depth
    scene.expand_all()
    assert scene.expanded_depth() == max(g.depth for g in scene.groups.values()) + 1


def test_relayout_after_expansion_only_touches_that_group_and_its_ancestors(doc: DocumentModel) -> None:
    scene = doc.level.scene
    scene.collapse_all()
    lay_out(scene)
    scene.set_expanded("blocks.1", True)
    assert set(scene.pending_requests()) == {"blocks.1", ""}


def test_subgraphs_are_reachable_and_come_back(doc: DocumentModel) -> None:
    cond = next(n for n in doc.program.graph.nodes if n.target == "torch.ops.higher_order.cond")
    assert [sg.name for sg in cond.subgraphs] == ["true_graph_0", "false_graph_0"]
    assert doc.enter_subgraph(cond.name, "true_graph_0")
    assert doc.level.graph.name == "true_graph_0" and len(doc.levels) == 2
    lay_out(doc.level.scene)
    assert {n.node for n in doc.level.scene.compose().nodes} == {n.name for n in cond.subgraphs[0].nodes}
    doc.go_to_level(0)
    assert len(doc.levels) == 1 and doc.level.graph is doc.program.graph


def test_search_and_selection_highlight_neighbours(doc: DocumentModel) -> None:
    index = doc.level.index
    hits = index.search(r"^softmax")
    assert [h.node for h in hits] == ["softmax", "softmax_1"]
    assert index.search("blocks\\.1\\.mlp") and all("blocks.1.mlp" in h.text or "blocks_1_mlp" in h.text
                                                   for h in index.search("blocks\\.1\\.mlp"))
    assert index.search("(unclosed") == []  # a bad regex is searched literally, not an error
    scene = doc.level.scene
    scene.expand_all()
    doc.select("softmax")
    h = doc.highlight()
    assert h.nodes["softmax"] == 2
    assert {n for n, s in h.nodes.items() if s == 1} == set(index.producers["softmax"]) | set(index.users["softmax"])
