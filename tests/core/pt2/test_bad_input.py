"""Bad files get one clear `ArchiveError` naming the problem, never a traceback.

Each case starts from a real archive exported by torch (tests/programs.py) or from plain bytes, and breaks it the way
files really break: wrong path, a folder, not a zip, cut short, no program inside, bad JSON, JSON of the wrong
shape, a member claiming to be huge. `pt2-viewer info` must exit non-zero with the same message and no traceback.
"""
from __future__ import annotations

import re
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.pt2 import archive as archive_module
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.info import archive_info
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import (  # noqa: F401  (pt2_path is a fixture)
    REPO_ROOT,
    member_named,
    pt2_path,
    read_members,
    with_member,
    with_model_json,
    write_members,
)


def read_error(path: Path) -> str:
    """The message `read_archive` (then `archive_info`) gives for `path`; fails the test if there is none."""
    with pytest.raises(ArchiveError) as caught:
        archive_info(read_archive(path))
    message = str(caught.value)
    assert message.strip(), "an ArchiveError must say what is wrong"
    assert "Traceback" not in message
    return message


@pytest.fixture
def real(pt2_path) -> Path:
    return pt2_path("topk_cond")


# --------------------------------------------------------------------------------------------------------------------
# The file itself


def test_missing_file(tmp_path: Path) -> None:
    message = read_error(tmp_path / "nowhere.pt2")
    assert "nowhere.pt2" in message and "does not exist" in message


def test_folder(tmp_path: Path) -> None:
    folder = tmp_path / "looks_like.pt2"
    folder.mkdir()
    message = read_error(folder)
    assert "folder" in message and "looks_like.pt2" in message


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "notes.pt2"
    path.write_text("these are not the programs you are looking for\n" * 20)
    message = read_error(path)
    assert "notes.pt2" in message and "text file" in message
    assert "truncated" not in message  # a text file renamed .pt2 is no interrupted download


def test_a_binary_file_that_is_no_zip_is_not_called_truncated(tmp_path: Path) -> None:
    path = tmp_path / "elf.pt2"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    message = read_error(path)
    assert "elf.pt2" in message and "not a zip file" in message and "truncated" not in message


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pt2"
    path.write_bytes(b"")
    message = read_error(path)
    assert "empty.pt2" in message and "empty" in message.lower().replace("empty.pt2", "")
    assert "zip" not in message  # said once: it is empty, not also "not a valid zip file (File is not a zip file)"


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.999])
def test_truncated_zip(tmp_path: Path, real: Path, keep: float) -> None:
    data = real.read_bytes()
    path = tmp_path / "cut.pt2"
    path.write_bytes(data[: int(len(data) * keep)])
    message = read_error(path)
    assert "cut.pt2" in message and "truncated" in message


def test_corrupted_program_bytes(tmp_path: Path, real: Path) -> None:
    """A bit flipped inside the stored program JSON: the zip's CRC check catches it."""
    members = read_members(real)
    data = real.read_bytes()
    body = members[member_named(members, "models/model.json")]
    at = data.index(body) + len(body) // 2
    path = tmp_path / "flipped.pt2"
    path.write_bytes(data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :])
    message = read_error(path)
    assert "models/model.json" in message and ("damaged" in message or "truncated" in message)


# --------------------------------------------------------------------------------------------------------------------
# A zip, but not a program


def test_zip_with_no_program(tmp_path: Path, real: Path) -> None:
    path = with_member(real, tmp_path / "weights_only.pt2", "models/model.json", None)
    message = read_error(path)
    assert "no program" in message and "models/" in message


def test_zip_of_something_else(tmp_path: Path) -> None:
    path = write_members(tmp_path / "photos.pt2", {"holiday/beach.txt": b"sand", "holiday/notes.txt": b"sun"})
    message = read_error(path)
    assert "photos.pt2" in message and "not a torch.export archive" in message


def test_other_archive_format(tmp_path: Path, real: Path) -> None:
    path = with_member(real, tmp_path / "other.pt2", "archive_format", b"executorch")
    message = read_error(path)
    assert "executorch" in message and "not a torch.export" in message


# --------------------------------------------------------------------------------------------------------------------
# The program's JSON


@pytest.mark.parametrize(
    "text",
    [b'{"graph_module": ', b"", b"\xff\xfe not utf-8", b"[1, 2,, 3]", b"NaNaNaN"],
    ids=["cut-short", "empty", "not-utf8", "bad-syntax", "not-json"],
)
def test_malformed_json(tmp_path: Path, real: Path, text: bytes) -> None:
    path = with_member(real, tmp_path / "bad_json.pt2", "models/model.json", text)
    message = read_error(path)
    assert "models/model.json" in message and "not valid JSON" in message


def _graph(doc: dict) -> dict:
    return doc["graph_module"]["graph"]


# (what is broken, how to break a real program's JSON, a word the message must contain)
WRONG_SHAPES: list[tuple[str, Callable[[dict], object], str]] = [
    ("nodes-is-a-string", lambda d: _graph(d).__setitem__("nodes", "linear, topk"), "nodes"),
    ("node-without-target", lambda d: _graph(d)["nodes"][0].pop("target"), "target"),
    ("target-is-a-number", lambda d: _graph(d)["nodes"][0].__setitem__("target", 7), "target"),
    ("node-is-a-list", lambda d: _graph(d)["nodes"].__setitem__(0, ["linear"]), "node"),
    ("no-graph-module", lambda d: d.pop("graph_module"), "graph_module"),
    ("input-specs-is-an-object", lambda d: d["graph_module"]["signature"].__setitem__("input_specs", {}),
     "input_specs"),
    ("unknown-output-kind", lambda d: d["graph_module"]["signature"]["output_specs"].__setitem__(
        0, {"teleport": {}}), "teleport"),
    ("argument-with-two-kinds", lambda d: _graph(d)["nodes"][0]["inputs"][0].__setitem__(
        "arg", {"as_tensor": {"name": "x"}, "as_int": 3}), "one member"),
    ("tensor-values-is-a-list", lambda d: _graph(d).__setitem__("tensor_values", []), "tensor_values"),
    ("range-constraints-is-a-list", lambda d: d.__setitem__("range_constraints", [1, 2]), "range_constraints"),
    ("subgraph-without-graph", lambda d: next(
        a for n in _graph(d)["nodes"] for a in n["inputs"] if "as_graph" in a["arg"])["arg"]["as_graph"].pop("graph"),
        "graph"),
]


@pytest.mark.parametrize("change,word", [(c, w) for _, c, w in WRONG_SHAPES], ids=[i for i, _, _ in WRONG_SHAPES])
def test_json_of_the_wrong_shape(tmp_path: Path, real: Path, change: Callable[[dict], object], word: str) -> None:
    path = with_model_json(real, tmp_path / "odd_shape.pt2", change)
    message = read_error(path)
    assert "model" in message and "odd_shape.pt2" in message, message
    assert word in message, f"the message should name what is wrong ({word!r}): {message}"


def test_program_that_is_not_an_object(tmp_path: Path, real: Path) -> None:
    path = with_member(real, tmp_path / "listed.pt2", "models/model.json", b'[{"graph_module": {}}]')
    message = read_error(path)
    assert "models/model.json" in message and "object" in message and "listed.pt2" in message


def _declare_size(path: Path, member: str, size: int) -> None:
    """Rewrite the zip's local and central headers so `member` claims `size` uncompressed bytes."""
    assert size < 0xFFFFFFFF, "a plain (non-zip64) header holds 32 bits"
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
        central = zf.start_dir  # where the central directory starts
    struct.pack_into("<I", data, info.header_offset + 22, size)  # local header: uncompressed size
    offset = central
    while data[offset : offset + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, offset + 28)
        name = bytes(data[offset + 46 : offset + 46 + name_len]).decode()
        if name == member:
            struct.pack_into("<I", data, offset + 24, size)  # central header: uncompressed size
            break
        offset += 46 + name_len + extra_len + comment_len
    else:
        raise AssertionError(f"{member} not found in the central directory")
    path.write_bytes(bytes(data))


def test_member_claiming_more_than_the_limit(tmp_path: Path, real: Path) -> None:
    members = read_members(real)
    name = member_named(members, "models/model.json")
    path = write_members(tmp_path / "huge.pt2", members)
    claimed = 2 * archive_module.MAX_JSON_BYTES
    _declare_size(path, name, claimed)
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo(name).file_size == claimed  # the crafted header is what a zip reader sees
    message = read_error(path)
    assert "models/model.json" in message and re.search(r"\d+ ?MB", message), message
    assert "more than" in message


# --------------------------------------------------------------------------------------------------------------------
# The command line


def _bad_file(case: str, tmp_path: Path, real: Path) -> tuple[Path, str]:
    """A bad input for `pt2-viewer info`, with a phrase its message must hold."""
    if case == "missing":
        return tmp_path / "missing.pt2", "does not exist"
    if case == "not-zip":
        path = tmp_path / "plain.pt2"
        path.write_text("plain text")
        return path, "text file"
    if case == "truncated":
        path = tmp_path / "cut.pt2"
        path.write_bytes(real.read_bytes()[:2000])
        return path, "truncated"
    if case == "bad-json":
        return with_member(real, tmp_path / "j.pt2", "models/model.json", b"{"), "not valid JSON"
    if case == "wrong-shape":
        return with_model_json(real, tmp_path / "s.pt2", lambda d: _graph(d).pop("nodes")), "shape"
    raise ValueError(case)


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["summary", "json"])
@pytest.mark.parametrize("case", ["missing", "not-zip", "truncated", "bad-json", "wrong-shape"])
def test_cli_info_reports_bad_files_without_traceback(
    tmp_path: Path, real: Path, case: str, json_flag: list[str]
) -> None:
    path, phrase = _bad_file(case, tmp_path, real)
    run = subprocess.run(
        [sys.executable, "-m", "pt2_viewer", "info", str(path), *json_flag],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode != 0, "exit status 0 for a bad file"
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    assert run.stdout == "", "nothing belongs on stdout for a bad file"
    assert phrase in run.stderr, run.stderr
    # Someone running `info` over many files must see which one is bad.
    assert path.name in run.stderr, f"the message should name the file: {run.stderr!r}"
