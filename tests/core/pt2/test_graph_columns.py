"""The parsed-program cache's columnar graphs (core/pt2/graph_columns.py, issue 32 §2): a reopened program's first
view (the index, its module tree, the collapsed scene, Find) is built without decoding any node's inputs or
metadata; Details decodes the node it shows, equal to what the reader builds; a damaged archive (repeated node
names) reads back equal; an entry whose columns do not add up is a miss, never a wrong graph. Real archives exported
by torch (tests/programs.py)."""
from __future__ import annotations

import shutil
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pt2_viewer.core.graph.details import node_details
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.model.program import Archive, ColumnNode, Node, NodeOp
from pt2_viewer.core.pt2.parsed_cache import HEADER, ParsedProgramCache
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import pt2_path, with_model_json  # noqa: F401  (pt2_path is a fixture)


def _reopened(path: Path, cache_dir: Path) -> tuple[ParsedProgramCache, Archive]:
    cache = ParsedProgramCache(cache_dir)
    cache.read(path)
    again = cache.read(path)
    assert cache.hits == 1
    return cache, again


def _decoded(nodes: list[Node]) -> list[str]:
    """The nodes whose inputs and metadata have been decoded."""
    return [n.name for n in nodes if not (isinstance(n, ColumnNode) and n.fill is not None)]


@pytest.mark.parametrize("name", ["attention_blocks", "cond_map"])
def test_the_first_view_decodes_no_node_and_details_decodes_its_own(name: str, pt2_path: Callable[[str], Path],
                                                                    tmp_path: Path) -> None:
    path = shutil.copy(pt2_path(name), tmp_path / "p.pt2")
    _, archive = _reopened(Path(path), tmp_path / "cache")
    expected = read_archive(path)
    program = archive.programs[0]
    graph = program.graph
    model = DocumentModel(archive, program)  # the index, the module tree, the collapsed scene
    index = model.level.index
    assert index.search("linear|add|cond|map")  # Find over names, targets, modules and shapes
    reader_index = DocumentModel(expected, expected.programs[0]).level.index
    assert [(g.path, g.nodes) for g in index.modules.walk()] == \
        [(g.path, g.nodes) for g in reader_index.modules.walk()]
    assert _decoded(graph.nodes) == []
    shown = next(n for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION)  # what Details shows
    details = node_details(program, graph, shown.name, index)
    assert _decoded(graph.nodes) == [shown.name]
    reader_node = expected.programs[0].graph.node_by_name[shown.name]
    assert (shown.inputs, shown.metadata) == (reader_node.inputs, reader_node.metadata)
    assert details == node_details(expected.programs[0], expected.programs[0].graph, shown.name, reader_index)
    assert archive == expected  # every node, decoded now, equals the reader's


def test_repeated_node_names_read_back_equal(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    def duplicate_name(doc: dict[str, Any]) -> None:  # a damaged archive: two nodes carry one name
        nodes = doc["graph_module"]["graph"]["nodes"]
        nodes[4]["name"] = nodes[3]["name"]

    path = with_model_json(pt2_path("attention_blocks"), tmp_path / "dup.pt2", duplicate_name)
    expected = read_archive(path)
    names = [n.name for n in expected.programs[0].graph.nodes]
    assert len(set(names)) < len(names)
    _, archive = _reopened(path, tmp_path / "cache")
    assert archive.programs[0].graph.node_by_name == expected.programs[0].graph.node_by_name
    assert archive == expected


def _rewrite(entry: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the top graph's block of an entry and write it back with a valid checksum: only the columns' own checks
    can tell."""
    data = entry.read_bytes()
    magic, digest, _, meta_len = HEADER.unpack_from(data)
    body = data[HEADER.size:]
    shadow, graphs = msgspec.msgpack.decode(body[meta_len:])
    change(graphs[0])
    body = body[:meta_len] + msgspec.msgpack.encode([shadow, graphs])
    entry.write_bytes(HEADER.pack(magic, digest, zlib.crc32(body), meta_len) + body)


DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "a target id out of range": lambda b: b.update(target_ids=b["target_ids"][:-4] + struct.pack("<i", 10**6)),
    "a column cut short": lambda b: b.update(out_off=b["out_off"][:-4]),
    "an edge to no node": lambda b: b.update(edge_src=struct.pack("<i", -1) + b["edge_src"][4:]),
    "a scope that is not there": lambda b: b["stacks"].append([10**6]) or b.update(
        stack_ids=b["stack_ids"][:-4] + struct.pack("<i", len(b["stacks"]) - 1)),
    "a column of the wrong type": lambda b: b.update(ops=[1, 2]),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_an_entry_whose_columns_do_not_add_up_is_a_miss(damage: str, pt2_path: Callable[[str], Path],
                                                        tmp_path: Path) -> None:
    path = Path(shutil.copy(pt2_path("attention_blocks"), tmp_path / "p.pt2"))
    cache = ParsedProgramCache(tmp_path / "cache")
    cache.read(path)
    _rewrite(cache.entry_path(path), DAMAGE[damage])
    archive = cache.read(path)
    assert cache.hits == 0
    assert archive == read_archive(path)


def test_a_field_assigned_before_its_first_read_keeps_what_was_assigned(pt2_path: Callable[[str], Path],
                                                                        tmp_path: Path) -> None:
    path = Path(shutil.copy(pt2_path("attention_blocks"), tmp_path / "p.pt2"))
    _, archive = _reopened(path, tmp_path / "cache")
    expected = read_archive(path).programs[0].graph
    node = next(n for n in archive.programs[0].graph.nodes if n.op is NodeOp.CALL_FUNCTION)
    node.inputs = []  # as a tool rewriting a node would
    assert node.metadata == expected.node_by_name[node.name].metadata  # decoded now: inputs stay as assigned
    assert node.inputs == []
