"""Search (core/graph/index.py) finds shapes, dtypes and symbols, and says each result's op and module."""
from __future__ import annotations

from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.pt2.reader import read_archive


def test_shapes_and_symbols_are_searchable(pt2_path) -> None:  # type: ignore[no-untyped-def]
    graph = read_archive(pt2_path("dynamic_shapes")).program().graph
    index = GraphIndex(graph)
    # x is f32[s77, s17], y f32[s17, s94], matmul/relu/add f32[s77, s94]
    assert {h.node for h in index.search("s17")} == {"x", "y"}
    hits = index.search("f32[")  # a bad regex: matched literally
    assert {h.node for h in hits} == {"x", "y", "matmul", "relu", "add"}
    assert all(h.field in ("shape", "name", "target") for h in hits)
    assert [h.node for h in index.search(r"Sym\(s77\)")] == ["sym_size_int_1"]
    assert index.search("s9") and all("s94" in h.text for h in index.search("s9"))


def test_results_say_op_and_module(pt2_path) -> None:  # type: ignore[no-untyped-def]
    graph = read_archive(pt2_path("attention_blocks")).program().graph
    index = GraphIndex(graph)
    hit = next(h for h in index.search("linear") if graph.node_by_name[h.node].op_name == "linear")
    text = index.hit_text(hit)
    node = graph.node_by_name[hit.node]
    assert text.startswith(f"{hit.node}  ·  linear") and f"in {node.module_path}" in text
    shape_hit = index.search(r"f32\[48, 16\]")[0]
    assert shape_hit.field == "shape" and index.hit_text(shape_hit).endswith("→ f32[48, 16]")
