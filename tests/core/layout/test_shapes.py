"""Groups of one shape are laid out once: a model's repeated blocks ask Graphviz (and the disk cache) for one layout
per distinct shape, and each group gets that layout under its own node ids. On the bundled example (a real two-block
transformer export) through a real layout child, compared with Graphviz run on every request in this thread."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.graph.scene import SceneModel
from pt2_viewer.core.layout import LayoutCache, LayoutEdge, LayoutNode, LayoutRequest, LayoutService
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.layout.records import dumps
from pt2_viewer.core.pt2.reader import read_archive

EXAMPLE = Path(__file__).resolve().parents[3] / "resources" / "examples" / "example.pt2"


def renamed(request: LayoutRequest, prefix: str) -> LayoutRequest:
    """The same graph with other node ids (another layer's nodes), an edge to an unknown node kept unknown."""
    name = {n.id: f"{prefix}{n.id}" for n in request.nodes}
    return LayoutRequest([LayoutNode(name[n.id], n.width, n.height, n.shape) for n in request.nodes],
                         [LayoutEdge(name.get(e.src, "ghost"), name.get(e.dst, "ghost")) for e in request.edges],
                         request.rankdir, key_hint=f"{prefix}group")


def diamond() -> LayoutRequest:
    nodes = [LayoutNode(n, 90, 30) for n in ("in", "left", "right", "out")]
    edges = [LayoutEdge(a, b) for a, b in (("in", "left"), ("in", "right"), ("left", "out"), ("right", "out"),
                                           ("out", "nowhere"))]
    return LayoutRequest(nodes, edges, key_hint="diamond")


def test_one_shape_is_one_cache_entry_answered_under_each_requests_ids(tmp_path: Path) -> None:
    first, second = diamond(), renamed(diamond(), "layers.7.")
    assert first.shape() == second.shape() and first.content() != second.content()
    cache = LayoutCache(tmp_path, engine="test-engine")
    result = layout(first)
    assert cache.put(first, result)
    again = cache.get(second)
    assert again is not None and set(again.positions) == {n.id for n in second.nodes}
    assert [again.positions[f"layers.7.{n}"] for n in result.positions] == list(result.positions.values())
    assert [(e.src, e.dst) for e in again.edges] == [(e.src, e.dst) for e in second.edges]
    assert [e.points for e in again.edges] == [e.points for e in result.edges]
    assert again.edges[-1].points == [], "the edge to an unknown node stays unrouted"
    drawn = layout(second)
    assert (again.positions, again.edges) == (drawn.positions, drawn.edges), "what Graphviz draws for the renamed one"
    assert len(list(tmp_path.rglob("*.json"))) == 1


def distinct_shapes(requests: list[LayoutRequest]) -> int:
    return len({dumps(r.shape()) for r in requests})


def example_scene() -> SceneModel:
    archive = read_archive(EXAMPLE)
    scene = DocumentModel(archive, archive.programs[0]).level.scene
    scene.expand_all()
    return scene


def test_repeated_blocks_are_laid_out_once_per_shape(tmp_path: Path) -> None:
    scene, here = example_scene(), example_scene()
    shapes = asked = 0
    with LayoutService(tmp_path / "cache", processes=1) as service:
        while pending := scene.pending_requests():
            keys = list(pending)
            requests = [pending[k] for k in keys]
            shapes += distinct_shapes(requests)
            asked += len(requests)
            results = service.wait(service.submit(requests), timeout=120)
            scene.set_layouts({k: (pending[k], r) for k, r in zip(keys, results, strict=True)})
            for request, result in zip(requests, results, strict=True):
                assert result.positions == layout(request).positions, request.key_hint
        assert service.laid_out == shapes < asked, "one Graphviz layout per distinct shape, fewer than the groups"
        assert service.asked == asked and service.reused == asked - shapes and service.cache_hits == 0
    blocks = [scene.layouts[p] for p in ("blocks.0", "blocks.1")]
    assert blocks[0].width == blocks[1].width and blocks[0].height == blocks[1].height
    assert list(blocks[0].positions.values()) == list(blocks[1].positions.values()), "the two blocks share a shape"

    with LayoutService(tmp_path / "cache", processes=1) as reopened:  # every shape from the disk cache
        while pending := here.pending_requests():
            results = reopened.wait(reopened.submit(list(pending.values())), timeout=120)
            here.set_layouts({k: (pending[k], r) for k, r in zip(pending, results, strict=True)})
        assert reopened.laid_out == 0 and reopened.cache_hits == shapes and reopened.child_starts == 0
    assert (here.compose().width, here.compose().height) == (scene.compose().width, scene.compose().height)
    assert {p: r.positions for p, r in here.layouts.items()} == {p: r.positions for p, r in scene.layouts.items()}
