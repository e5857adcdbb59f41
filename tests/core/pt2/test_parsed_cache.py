"""The parsed-program cache (core/pt2/parsed_cache.py): a program opened again comes from the cache and equals what
the reader builds from the JSON; a stale, corrupt or foreign entry is a miss, never a wrong graph; the folder stays
within its limit, oldest entries going first. Real archives exported by torch (tests/programs.py)."""
from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.pt2 import archive as zipfiles
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache, cache_root
from pt2_viewer.core.pt2.reader import read_archive
from tests import hostile_archives as hostile
from tests.programs import member_named, pt2_path, read_members, with_model_json  # noqa: F401  (pt2_path: a fixture)


def _entries(cache: ParsedProgramCache) -> list[Path]:
    return sorted(cache.directory.glob("*/*.msgpack"))


def _same(a: object, b: object) -> None:
    """Field by field, so a failure names what differs (dataclass equality covers every field)."""
    assert a == b


@pytest.mark.parametrize("name", ["cond_map", "topk_cond", "dynamic_shapes", "custom_op", "two_programs"])
def test_a_second_open_comes_from_the_cache_and_equals_the_reader(name: str, pt2_path: Callable[[str], Path],
                                                                  tmp_path: Path) -> None:
    path = shutil.copy(pt2_path(name), tmp_path / "p.pt2")
    cache = ParsedProgramCache(tmp_path / "cache")
    first = cache.read(path)
    second = cache.read(path)
    assert (cache.misses, cache.hits) == (1, 1)
    expected = read_archive(path)
    _same(first, expected)
    _same(second, expected)
    for program in second.programs:  # subgraph operands are the node's own Graph objects, as the reader makes them
        for _, g in program.all_graphs():
            for node in g.nodes:
                operands = [a.value for a in node.inputs if a.value in node.subgraphs]
                assert all(any(op is sg for sg in node.subgraphs) for op in operands)
    assert [str(n.meta.short) for n in [v for v in second.programs[0].graph.values.values() if v.meta][:5]] == \
        [str(n.meta.short) for n in [v for v in expected.programs[0].graph.values.values() if v.meta][:5]]


def test_a_changed_file_is_a_miss(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    path = Path(shutil.copy(pt2_path("topk_cond"), tmp_path / "p.pt2"))
    cache = ParsedProgramCache(tmp_path / "cache")
    cache.read(path)
    # Same name, other content: the program's JSON edited (a node renamed), the mtime set back to the old one.
    stat = path.stat()
    edited = with_model_json(path, tmp_path / "edited.pt2",
                             lambda doc: doc["graph_module"]["graph"]["nodes"][0].update(name="renamed_node"))
    os.replace(edited, path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    archive = cache.read(path)
    assert cache.hits == 0
    assert "renamed_node" in {n.name for n in archive.programs[0].graph.nodes}
    assert archive == read_archive(path)


def test_a_stale_entry_under_the_right_name_is_a_miss(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    """An entry whose content digest is not this file's (e.g. written for other bytes that kept size and mtime) is
    not used even when found under the file's key."""
    a = Path(shutil.copy(pt2_path("topk_cond"), tmp_path / "a.pt2"))
    b = Path(shutil.copy(pt2_path("cond_map"), tmp_path / "b.pt2"))
    cache = ParsedProgramCache(tmp_path / "cache")
    cache.read(a)
    cache.read(b)
    entry_a, entry_b = (cache.entry_path(p) for p in (a, b))
    shutil.copy(entry_b, entry_a)  # a's entry now holds b's program
    archive = cache.read(a)
    assert cache.hits == 0 and archive == read_archive(a)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_a_corrupt_entry_is_a_miss(damage: str, pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    path = Path(shutil.copy(pt2_path("cond_map"), tmp_path / "p.pt2"))
    cache = ParsedProgramCache(tmp_path / "cache")
    cache.read(path)
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":  # one byte inside a string of the payload: only the checksum can tell
        i = data.index(b"cond", len(data) // 2)
        data = data[:i] + b"COND" + data[i + 4:]
    elif damage == "empty":
        data = b""
    else:
        data = os.urandom(len(data))
    entry.write_bytes(data)
    archive = cache.read(path)
    assert cache.hits == 0
    assert archive == read_archive(path)
    assert cache.read(path) == archive and cache.hits == 1  # the miss wrote a good entry again


def _damaged(src: Path, dst: Path, damage: str) -> Path:
    """A copy of `src` whose program JSON is damaged on disk, under the zip's own listing: a bit flipped in its bytes
    (its CRC-32 no longer matches), its local header naming another file than the directory does, or its size stated
    in ZIP64's extra field as 2**62 bytes (tests/hostile_archives.py: once allocated before it was checked)."""
    if damage == "zip64 size":
        return hostile.zip64_size(src, dst)
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as zf:
        info = zf.getinfo(member_named(read_members(src), "models/model.json"))
    name_at = info.header_offset + 30  # past the local header's fixed part (APPNOTE 4.3.7)
    if damage == "flipped bit":
        body = name_at + len(info.filename) + int.from_bytes(data[name_at - 2:name_at], "little")
        data[body + info.file_size // 2] ^= 0x01
    else:
        data[name_at + len(info.filename) - 6] ^= 0x20  # "model.json" -> "modeL.json", here only
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("damage", ["flipped bit", "other name in its header", "zip64 size"])
def test_a_member_damaged_on_disk_is_said_as_the_reader_says_it(damage: str, pt2_path: Callable[[str], Path],
                                                                tmp_path: Path) -> None:
    """A miss reads the members where they lie in the file, not through zipfile: what zipfile would refuse (a CRC
    that does not match, a header that names another file, a size no file holds) is refused all the same, in the
    reader's words (as `info` says it), and nothing is stored."""
    path = _damaged(pt2_path("cond_map"), tmp_path / "p.pt2", damage)
    with pytest.raises(ArchiveError) as expected:
        read_archive(path)
    assert "models/model.json" in str(expected.value)
    cache = ParsedProgramCache(tmp_path / "cache")
    with pytest.raises(ArchiveError) as said:
        cache.read(path)
    assert str(said.value) == str(expected.value)
    assert not _entries(cache)


def test_a_miss_reads_a_stored_zip_in_place_and_a_compressed_one_through_zipfile(
        pt2_path: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch stores its members plainly, and a miss reads them without opening the zip with zipfile (its directory
    parsed again, 7 ms at 10k nodes); a zip whose members are compressed is read through zipfile, and both equal what
    the reader builds."""
    stored = Path(shutil.copy(pt2_path("cond_map"), tmp_path / "stored.pt2"))
    compressed = tmp_path / "compressed.pt2"
    with zipfile.ZipFile(compressed, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in read_members(stored).items():
            zf.writestr(name, data)
    expected = {p: read_archive(p) for p in (stored, compressed)}
    opened: list[Path] = []
    open_zip = zipfiles.open_zip
    monkeypatch.setattr(zipfiles, "open_zip", lambda p: (opened.append(p), open_zip(p))[1])
    cache = ParsedProgramCache(tmp_path / "cache")
    assert cache.read(stored) == expected[stored] and opened == []
    assert cache.read(compressed) == expected[compressed] and opened == [compressed]
    assert cache.misses == 2 and cache.read(compressed) == expected[compressed] and cache.hits == 1


def test_the_folder_stays_within_its_limit_oldest_first(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    names = ["topk_cond", "cond_map", "dynamic_shapes"]
    paths = [Path(shutil.copy(pt2_path(n), tmp_path / f"{n}.pt2")) for n in names]
    probe = ParsedProgramCache(tmp_path / "probe")
    sizes = []
    for p in paths:
        probe.read(p)
        sizes.append(probe.entry_path(p).stat().st_size)
    # Room for the two newest entries, not three.
    cache = ParsedProgramCache(tmp_path / "cache", limit_bytes=sizes[1] + sizes[2] + 1)
    for i, p in enumerate(paths):
        cache.read(p)
        os.utime(cache.entry_path(p), ns=(i * 10**9, i * 10**9))  # written in this order
    cache.prune()
    kept = [p.name for p in paths if cache.entry_path(p).exists()]
    assert kept == ["cond_map.pt2", "dynamic_shapes.pt2"]
    assert sum(e.stat().st_size for e in _entries(cache)) <= cache.limit_bytes


def test_its_folder_is_in_the_users_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PT2V_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ParsedProgramCache().directory == tmp_path / "xdg" / "pt2-viewer" / "programs"
    monkeypatch.setenv("PT2V_CACHE_DIR", str(tmp_path / "tests"))
    assert cache_root() == tmp_path / "tests"
