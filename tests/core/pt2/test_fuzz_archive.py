"""Fuzzing the reader with damaged real archives: it must succeed or raise `ArchiveError`, nothing else.

Hypothesis mutates real `.pt2` files from tests/programs.py at three levels: raw bytes (flips, overwrites, cuts,
insertions), zip members (dropped, renamed, duplicated, odd names) and the program JSON (any value anywhere replaced
by a value of another type, or removed). Runs are deterministic (`derandomize=True`, no example database) and bounded.
On success the result must also survive `archive_info` and `json.dumps`, as `pt2-viewer info --json` does.
"""
from __future__ import annotations

import json
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.info import archive_info
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import member_named, program_path, read_members, write_members

SOURCES = ["topk_cond", "cond_map", "dynamic_shapes", "two_programs"]

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def sources() -> dict[str, Path]:
    return {name: program_path(name) for name in SOURCES}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _count(outcome: str) -> None:
    """Tally outcomes for `pytest --hypothesis-show-statistics`, to see that fuzzing reaches both."""
    if currently_in_test_context():
        event(outcome)


def read_or_archive_error(path: Path) -> None:
    """The property: reading `path` either works all the way to printable JSON, or raises ArchiveError."""
    try:
        info = archive_info(read_archive(path))
    except ArchiveError as error:
        assert str(error).strip(), "an ArchiveError must carry a message"
        _count("ArchiveError")
        return
    json.dumps(info)
    _count("read")


# --------------------------------------------------------------------------------------------------------------------
# Raw bytes

byte_edit = st.one_of(
    st.tuples(st.just("flip"), st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
    st.tuples(st.just("overwrite"), st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("cut"), st.floats(0, 1, exclude_max=True), st.integers(1, 4096)),
    st.tuples(st.just("insert"), st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("truncate"), st.floats(0, 1, exclude_max=True), st.none()),
)


def apply_byte_edit(data: bytes, edit: tuple[str, float, Any]) -> bytes:
    kind, where, arg = edit
    at = int(where * len(data))
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ arg]) + data[at + 1 :]
    if kind == "overwrite":
        return data[:at] + arg + data[at + len(arg) :]
    if kind == "cut":
        return data[:at] + data[at + arg :]
    if kind == "insert":
        return data[:at] + arg + data[at:]
    return data[:at]  # truncate


@FUZZ
@given(source=st.sampled_from(SOURCES), edits=st.lists(byte_edit, min_size=1, max_size=4))
def test_damaged_bytes(sources: dict[str, Path], scratch: Path, source: str, edits: list) -> None:
    data = sources[source].read_bytes()
    for edit in edits:
        if data:
            data = apply_byte_edit(data, edit)
    path = scratch / "bytes.pt2"
    path.write_bytes(data)
    read_or_archive_error(path)


@FUZZ
@given(source=st.sampled_from(SOURCES), edits=st.lists(byte_edit, min_size=1, max_size=3))
def test_damaged_program_text(sources: dict[str, Path], scratch: Path, source: str, edits: list) -> None:
    """Edits inside the program JSON's text, re-zipped with a correct checksum so that the JSON parser and the
    reader (not the zip CRC check) must cope: broken syntax, changed digits, cut strings."""
    members = read_members(sources[source])
    name = member_named(members, "models/model.json")
    text = members[name]
    for edit in edits:
        if text:
            text = apply_byte_edit(text, edit)
    members[name] = text
    read_or_archive_error(write_members(scratch / "program_text.pt2", members))


# --------------------------------------------------------------------------------------------------------------------
# Zip members

member_edit = st.tuples(
    st.sampled_from(["drop", "rename", "duplicate", "empty", "odd-name"]),
    st.integers(0, 10_000),
    st.sampled_from(["../escape.json", "/abs/models/model.json", "models/", "x" * 300, "models/evil.json", ""]),
)


@FUZZ
@given(source=st.sampled_from(SOURCES), edits=st.lists(member_edit, min_size=1, max_size=3))
def test_damaged_members(sources: dict[str, Path], scratch: Path, source: str, edits: list) -> None:
    members = list(read_members(sources[source]).items())
    for kind, pick, odd in edits:
        if not members:
            break
        i = pick % len(members)
        name, data = members[i]
        root = name.split("/", 1)[0]
        if kind == "drop":
            members.pop(i)
        elif kind == "rename":
            members[i] = (f"{root}/{odd}", data)
        elif kind == "duplicate":
            members.append((name, data[: len(data) // 2]))
        elif kind == "empty":
            members[i] = (name, b"")
        else:
            members.append((f"{root}/{odd}", data))
    path = scratch / "members.pt2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names, which is the point
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
            for name, data in members:
                zf.writestr(name, data)
    read_or_archive_error(path)


# --------------------------------------------------------------------------------------------------------------------
# The program JSON

replacement = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.just([]),
    st.just({}),
    st.just({"as_tensor": {"name": "nowhere"}}),
    st.just({"as_graph": {"name": "g", "graph": {}}}),
    st.lists(st.integers(), max_size=3),
    st.just("__DELETE__"),
)


def _containers(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) pair in a JSON document, depth first."""
    if isinstance(value, dict):
        for key, child in value.items():
            out.append((value, key))
            _containers(child, out)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.append((value, index))
            _containers(child, out)
    return out


@FUZZ
@given(
    source=st.sampled_from(SOURCES),
    edits=st.lists(st.tuples(st.integers(0, 100_000), replacement), min_size=1, max_size=3),
)
def test_damaged_program_json(sources: dict[str, Path], scratch: Path, source: str, edits: list) -> None:
    members = read_members(sources[source])
    name = member_named(members, "models/model.json")
    doc = json.loads(members[name])
    for pick, value in edits:
        slots = _containers(doc, [])
        if not slots:
            break
        container, key = slots[pick % len(slots)]
        if value == "__DELETE__":
            del container[key]
        else:
            container[key] = value
    members[name] = json.dumps(doc).encode()
    read_or_archive_error(write_members(scratch / "program_json.pt2", members))


# --------------------------------------------------------------------------------------------------------------------
# Nesting deep enough to break a naive recursive reader


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_json(sources: dict[str, Path], scratch: Path, depth: int) -> None:
    members = read_members(sources["topk_cond"])
    members[member_named(members, "models/model.json")] = b"[" * depth + b"]" * depth
    read_or_archive_error(write_members(scratch / "deep.pt2", members))


def test_deeply_nested_subgraphs(sources: dict[str, Path], scratch: Path) -> None:
    """A cond whose branch holds a cond whose branch holds a cond ... 3000 deep: error or success, no crash."""
    members = read_members(sources["topk_cond"])
    name = member_named(members, "models/model.json")
    doc = json.loads(members[name])
    cond = next(n for n in doc["graph_module"]["graph"]["nodes"] if n["target"].endswith("cond"))
    graph: dict[str, Any] = {"inputs": [], "outputs": [], "nodes": []}
    for _ in range(3000):
        graph = {"inputs": [], "outputs": [], "nodes": [{**cond, "inputs": [
            {"name": "", "arg": {"as_graph": {"name": "true_graph_0", "graph": graph}}, "kind": 1}]}]}
    cond["inputs"][1]["arg"]["as_graph"]["graph"] = graph
    # json.dumps itself recurses; give it room, then let the reader face the file.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        members[name] = json.dumps(doc).encode()
    finally:
        sys.setrecursionlimit(limit)
    read_or_archive_error(write_members(scratch / "deep_subgraphs.pt2", members))
