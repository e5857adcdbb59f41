"""The zip listing the parsed-program cache keys by (core/pt2/zip_listing.py): on archives torch wrote (and one
Python's zipfile wrote) it lists what `zipfile` lists, member for member (all 524 fixture and zoo archives of this
machine did, bench/README.md); anything it does not read plainly is None, and the cache then reads the file as
before; a reopen through the cache opens no `zipfile` at all."""
from __future__ import annotations

import shutil
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.pt2 import zip_listing
from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.pt2.zip_listing import read_listing
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)

PROGRAMS = ["cond_map", "topk_cond", "dynamic_shapes", "custom_op", "two_programs", "hf_tiny_bert", "input_kinds"]


def _as_zipfile_lists(path: Path) -> list[tuple[object, ...]]:
    with zipfile.ZipFile(path) as z:
        return [(i.filename, i.compress_type, i.flag_bits, i.CRC, i.compress_size, i.file_size, i.header_offset)
                for i in z.infolist()]


@pytest.mark.parametrize("name", PROGRAMS)
def test_it_lists_what_zipfile_lists(name: str, pt2_path: Callable[[str], Path]) -> None:  # noqa: F811
    listing = read_listing(pt2_path(name))
    assert listing is not None
    assert [tuple(m) for m in listing.members] == _as_zipfile_lists(pt2_path(name))


def test_a_comment_and_deflated_members(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:  # noqa: F811
    """Written by Python's zipfile instead of torch: the JSON deflated, a comment after the end record."""
    with zipfile.ZipFile(pt2_path("topk_cond")) as src, zipfile.ZipFile(tmp_path / "z.pt2", "w") as out:
        for info in src.infolist():
            kind = zipfile.ZIP_DEFLATED if info.filename.endswith(".json") else zipfile.ZIP_STORED
            out.writestr(info.filename, src.read(info), compress_type=kind)
        out.comment = b"a comment"
    listing = read_listing(tmp_path / "z.pt2")
    assert listing is not None
    assert [tuple(m) for m in listing.members] == _as_zipfile_lists(tmp_path / "z.pt2")


def test_zip64_sizes_and_offsets_come_from_the_extra_field() -> None:
    """A member past 4 GB (a big model's weights), as a central directory record says it (APPNOTE 4.5.3): the
    record's sizes and offset are 0xFFFFFFFF and the 8-byte values follow in the ZIP64 extra field."""
    name = b"archive/data/weights/weight_0"
    extra = struct.pack("<2H3Q", 0x0001, 24, 5 * 2**32, 5 * 2**32, 6 * 2**32)
    record = struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 45, 3, 45, 0, 0, 0, 0, 0, 1234, 0xFFFFFFFF, 0xFFFFFFFF,
                         len(name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + name + extra
    [member] = zip_listing._members(record, 1) or []
    assert (member.name, member.crc, member.size, member.compressed_size, member.header_offset) == (
        name.decode(), 1234, 5 * 2**32, 5 * 2**32, 6 * 2**32)
    assert zip_listing._members(record[:-8], 1) is None, "an extra field cut short"


@pytest.mark.parametrize("damage", ["empty", "text", "truncated", "prefixed", "directory cut"])
def test_what_it_does_not_read_plainly_is_none(damage: str, pt2_path: Callable[[str], Path],  # noqa: F811
                                               tmp_path: Path) -> None:
    data = pt2_path("topk_cond").read_bytes()
    path = tmp_path / "bad.pt2"
    path.write_bytes({"empty": b"", "text": b"def f(x):\n    return x\n", "truncated": data[:-30],
                      "prefixed": b"#!/bin/sh\n" + data,  # a self-extracting zip's offsets are off by its prefix
                      "directory cut": data[:-200] + data[-22:]}[damage])
    assert read_listing(path) is None


def test_a_reopen_opens_no_zipfile(pt2_path: Callable[[str], Path], tmp_path: Path,  # noqa: F811
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = shutil.copy(pt2_path("cond_map"), tmp_path / "p.pt2")
    cache = ParsedProgramCache(tmp_path / "cache")
    cache.read(path)

    def no_zipfile(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a reopen read the zip through zipfile")

    with monkeypatch.context() as m:
        m.setattr(zipfile, "ZipFile", no_zipfile)
        again = cache.read(path)
    assert (cache.misses, cache.hits) == (1, 1)
    assert again == read_archive(path)


def test_a_deflated_archive_is_cached_too(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:  # noqa: F811
    """Its JSON cannot be hashed where it lies: the digest reads it through the zip, and the entry still serves."""
    path = tmp_path / "deflated.pt2"
    with zipfile.ZipFile(pt2_path("topk_cond")) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info.filename, src.read(info))
    cache = ParsedProgramCache(tmp_path / "cache")
    first, second = cache.read(path), cache.read(path)
    assert (cache.misses, cache.hits) == (1, 1)
    assert first == second == read_archive(path)


def test_a_name_zipfile_would_cut_short_is_left_to_zipfile(pt2_path: Callable[[str], Path],  # noqa: F811
                                                          tmp_path: Path) -> None:
    """zipfile cuts a member's name at a NUL: such an archive is read as zipfile reads it, and still opens."""
    path = tmp_path / "nul.pt2"
    shutil.copy(pt2_path("topk_cond"), path)
    with zipfile.ZipFile(path, "a") as z:
        root = z.namelist()[0].split("/")[0]
        z.writestr(f"{root}/jQnk.json", b"{}")
    data = path.read_bytes()  # zipfile writes no NUL in a name: put one there, in both headers, as a crafted file has
    path.write_bytes(data.replace(b"/jQnk.json", b"/j\x00nk.json"))
    assert read_listing(path) is None
    cache = ParsedProgramCache(tmp_path / "cache")
    assert cache.read(path).programs[0].graph.nodes == read_archive(path).programs[0].graph.nodes
