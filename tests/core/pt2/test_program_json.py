"""A program's JSON as the reader parses it (core/pt2/program_json.py): the document `json.loads` gives, with the top
graph's equal tensor metadata parsed once and shared, and its nodes left as raw text the reader decodes one by one;
any other shape (a field torch does not write, tensor values that are not an object) parsed whole as before; and the
reader builds the same program either way. Real archives exported by torch (tests/programs.py)."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.pt2 import archive, reader
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.program_json import node_dict, parse_payload_config, parse_program
from tests.programs import REPO_ROOT, member_named, pt2_path, read_members, with_model_json  # noqa: F401  (a fixture)


def _nodes_decoded(doc: Any) -> Any:
    """`doc` with its top graph's nodes, which `parse_program` leaves as raw text, decoded as the reader takes them."""
    graph = doc.get("graph_module", {}).get("graph") if isinstance(doc.get("graph_module"), dict) else None
    if isinstance(graph, dict) and isinstance(graph.get("nodes"), list):
        graph["nodes"] = [node_dict(n) for n in graph["nodes"]]
    return doc


def _model_json(path: Path) -> bytes:
    members = read_members(path)
    return members[member_named(members, "models/model.json")]


@pytest.mark.parametrize("name", ["dynamic_shapes", "cond_map", "custom_op", "topk_cond"])
def test_it_gives_what_json_loads_gives_with_equal_metadata_shared(name: str,
                                                                   pt2_path: Callable[[str], Path]) -> None:
    data = _model_json(pt2_path(name))
    doc = parse_program(data)
    assert not isinstance(doc["graph_module"]["graph"]["nodes"][0], dict)  # left raw, decoded one at a time
    assert _nodes_decoded(doc) == json.loads(data)
    metas = list(doc["graph_module"]["graph"]["tensor_values"].values())
    distinct = {json.dumps(m, sort_keys=True) for m in metas}
    assert len({id(m) for m in metas}) == len(distinct) < len(metas)  # one dict per distinct metadata


@pytest.mark.parametrize("change", [
    lambda d: d.__setitem__("dialect", "EDGE"),  # a field this torch does not write (an older one did)
    lambda d: d["graph_module"]["graph"].__setitem__("tensor_values", []),  # not an object
    lambda d: d["graph_module"].__setitem__("graph", None),
    lambda d: d["graph_module"]["graph"]["tensor_values"].update(odd=float("nan")),  # NaN, as json.dumps writes it
], ids=["unknown_field", "values_a_list", "no_graph", "nan"])
def test_another_shape_is_parsed_whole_and_read_as_before(change: Callable[[dict], object],
                                                          pt2_path: Callable[[str], Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = with_model_json(pt2_path("dynamic_shapes"), tmp_path / "odd.pt2", change)
    data = _model_json(path)
    assert json.dumps(_nodes_decoded(parse_program(data)), sort_keys=True) == \
        json.dumps(json.loads(data), sort_keys=True)

    def read(parse: Callable[[bytes], object]) -> object:
        monkeypatch.setattr(reader, "parse_program", parse)
        try:
            return reader.read_archive(path)
        except ArchiveError as e:
            return str(e)

    assert read(parse_program) == read(archive.parse_json)


def test_what_is_not_json_is_refused_as_before() -> None:
    for data in (b"{", b'{"graph_module": }', b"\xff\xfe"):
        with pytest.raises(ValueError):
            parse_program(data)


def test_a_weights_config_gives_what_json_loads_gives_with_equal_metadata_shared() -> None:
    members = read_members(REPO_ROOT / "resources" / "examples" / "example.pt2")  # a two-layer transformer
    data = members[member_named(members, "data/weights/model_weights_config.json")]
    doc = parse_payload_config(data)
    assert doc == json.loads(data)
    metas = [entry["tensor_meta"] for entry in doc["config"].values()]
    assert len({id(m) for m in metas}) == len({json.dumps(m, sort_keys=True) for m in metas}) < len(metas)
    odd = json.loads(data)
    odd["config"][next(iter(odd["config"]))]["dtype_hint"] = "float32"  # a field torch does not write
    assert parse_payload_config(json.dumps(odd).encode()) == odd  # parsed whole, as before
