"""A zip's central directory, read as stored: every member's name, size, CRC and offset, and the raw bytes they are
listed in.

The parsed-program cache (core/pt2/parsed_cache.py) keys an entry by an archive's listing and hashes its JSON members
where they lie, before it knows whether the entry is usable: a reopen needs nothing else from the zip. `zipfile`
builds a `ZipInfo` per member for that (10-13 ms of CPU for the 2,171 members of a 10k-node program, most of a
reopen's key); this reads the same directory with two reads and one struct per member (APPNOTE.TXT 4.3.12-4.3.16,
with ZIP64's sizes and offsets). Anything it does not expect (a multi-disk zip, bytes before the zip, a directory
that does not add up) gives None, and the caller reads the file with `zipfile`, which says what is wrong with it.
"""
from __future__ import annotations

import os
import struct
from typing import BinaryIO, NamedTuple

import msgspec

_END = struct.Struct("<4s4H2LH")  # end of central directory record
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")
_RECORD = struct.Struct("<4s4B4HL2L5H2L")  # central directory file header
_MAX_COMMENT = 0xFFFF
_UTF8_NAME = 0x800
_ZIP64_EXTRA = 0x0001


class Member(NamedTuple):  # a tuple: one per member, thousands per archive, built at C speed
    name: str
    compress_type: int
    flags: int
    crc: int
    compressed_size: int
    size: int
    header_offset: int


class ZipListing(msgspec.Struct, frozen=True):
    """A zip's central directory as stored, and its members."""

    raw: bytes  # the central directory as stored
    members: list[Member]


def read_listing(path: str | os.PathLike[str]) -> ZipListing | None:
    """The central directory of the zip at `path`, or None when it is not one this reads (see the module)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            tail_size = min(size, _END.size + _MAX_COMMENT + _END64_LOCATOR.size)
            f.seek(size - tail_size)
            tail = f.read(tail_size)
            found = _directory_place(f, tail, size)
            if found is None:
                return None
            offset, length, count = found
            f.seek(offset)
            raw = f.read(length)
    except OSError:
        return None
    if len(raw) != length:
        return None
    members = _members(raw, count)
    return None if members is None else ZipListing(raw, members)


def _directory_place(f: BinaryIO, tail: bytes, file_size: int) -> tuple[int, int, int] | None:
    """(offset, length, member count) of the central directory, from the end records at the file's end."""
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _END.size:
        return None
    _sig, disk, disk_cd, _on_disk, count, length, offset, comment = _END.unpack_from(tail, at)
    if at + _END.size + comment != len(tail) or disk or disk_cd:
        return None
    end_at = file_size - (len(tail) - at)  # where the end record lies in the file
    # ZIP64's end record, when its locator lies just before (torch's writer adds both to every archive)
    locator = tail[at - _END64_LOCATOR.size:at] if at >= _END64_LOCATOR.size else b""
    if locator.startswith(b"PK\x06\x07"):
        _sig, _disk, end64_at, _disks = _END64_LOCATOR.unpack(locator)
        f.seek(end64_at)
        record = f.read(_END64.size)
        if len(record) != _END64.size:
            return None
        sig, _size, _made, _needed, disk, disk_cd, _on_disk, count, length, offset = _END64.unpack(record)
        if sig != b"PK\x06\x06" or disk or disk_cd:
            return None
        end_at = end64_at
    elif count == 0xFFFF or length == 0xFFFFFFFF or offset == 0xFFFFFFFF:
        return None  # ZIP64 values without ZIP64's records
    if offset + length != end_at:  # bytes before the zip, or a directory that does not end where the records say
        return None
    return offset, length, count


def _members(raw: bytes, count: int) -> list[Member] | None:
    members: list[Member] = []
    at, end = 0, len(raw)
    unpack = _RECORD.unpack_from
    try:
        while at < end:
            (sig, _made, _system, _needed, _reserved, flags, compress_type, _time, _date, crc, compressed, size,
             name_len, extra_len, comment_len, _disk, _internal, _external, header_offset) = unpack(raw, at)
            if sig != b"PK\x01\x02":
                return None
            at += _RECORD.size
            name_bytes = raw[at:at + name_len]
            name = name_bytes.decode("utf-8" if flags & _UTF8_NAME else "cp437")
            if "\x00" in name:  # zipfile cuts such a name short: read the file through zipfile instead
                return None
            if compressed == 0xFFFFFFFF or size == 0xFFFFFFFF or header_offset == 0xFFFFFFFF:
                size, compressed, header_offset = _zip64(raw[at + name_len:at + name_len + extra_len], size,
                                                         compressed, header_offset)
            members.append(Member(name, compress_type, flags, crc, compressed, size, header_offset))
            at += name_len + extra_len + comment_len
    except (struct.error, UnicodeDecodeError, ValueError, IndexError):
        return None
    return members if at == end and len(members) == count else None


def _zip64(extra: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    """The 8-byte values of ZIP64's extra field, in its order, for the fields the record leaves at 0xFFFFFFFF."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<2H", extra, at)
        if kind == _ZIP64_EXTRA:
            values = list(struct.unpack_from(f"<{length // 8}Q", extra, at + 4))
            out = []
            for value in (size, compressed, offset):
                out.append(values.pop(0) if value == 0xFFFFFFFF else value)
            return out[0], out[1], out[2]
        at += 4 + length
    raise ValueError("a ZIP64 member without its extra field")
