"""A zip's plainly stored members, read where they lie in the file, without `zipfile`: what the parsed-program cache
(core/pt2/parsed_cache.py) reads on a miss and hashes on a hit.

torch stores a `.pt2`'s members uncompressed, so a member's bytes are a slice of the file after its local header.
Reading them so skips zipfile's second parse of the directory (27-40 ms of a 10k-node first open, now 9-10 ms), but
trusts nothing the archive states: a member is read only when it is stored plainly, its local header is one and
names the file the directory names (zipfile refuses others), and its stated size is the stored one, within the
caller's limit and within the file. Anything else gives None, and the caller reads the archive through `zipfile`,
whose reader says what is wrong (a hostile ZIP64 size of 2**62 bytes once made this allocate it: MemoryError).
"""
from __future__ import annotations

import mmap
import os
import struct
import zipfile
from collections.abc import Callable
from typing import BinaryIO

from pt2_viewer.core.pt2.zip_listing import Member

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local header (APPNOTE 4.3.7), as zipfile reads it
_NOT_PLAIN = 0x1 | 0x20 | 0x40  # flags of an encrypted or patched member (zipfile refuses those)


def stored_data(f: BinaryIO, member: Member, file_size: int, limit: int) -> bytes | None:
    """The bytes of a member stored plainly, read from `f` (a file of `file_size` bytes) after its local header,
    which must be what zipfile accepts: its signature, and the directory's name for it. None otherwise, and for a
    stated size that is not the stored one, over `limit`, or past the file's end: every size is checked against the
    file before anything is allocated for it."""
    if (member.size != member.compressed_size or member.size > limit
            or member.header_offset + member.size > file_size):
        return None

    def read_at(at: int, n: int) -> bytes:
        f.seek(at)
        return f.read(n)

    start = data_start(member, read_at, same_name=True)
    if start is None or start + member.size > file_size:
        return None
    data = read_at(start, member.size)
    return data if len(data) == member.size else None


def data_start(member: Member, read_at: Callable[[int, int], bytes], same_name: bool = False) -> int | None:
    """Where a plainly stored member's bytes start in the file, from its local header (`read_at(offset, n)` reads the
    file); None for a member not stored plainly, or a header that is not one. `same_name`: None too when the header
    names another file than the directory does (zipfile refuses to read such a member)."""
    if member.compress_type != zipfile.ZIP_STORED or member.flags & _NOT_PLAIN:
        return None
    at = member.header_offset
    header = read_at(at, _LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        return None
    signature, *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    if signature != b"PK\x03\x04":
        return None
    if same_name:
        try:
            name = read_at(at + _LOCAL_HEADER.size, name_length).decode("utf-8" if member.flags & 0x800 else "cp437")
        except UnicodeDecodeError:
            return None
        if name != member.name:
            return None
    return at + _LOCAL_HEADER.size + name_length + extra_length


class StoredMembers:
    """The bytes of a zip's stored (uncompressed) members where they lie in the file, through one mmap. `view` is
    None for a member it cannot find so."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = path
        self._map: mmap.mmap | None = None
        self._view: memoryview | None = None

    def __enter__(self) -> StoredMembers:
        try:
            with open(self._path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._view = memoryview(self._map)
        except (OSError, ValueError):
            self._map = None
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._view is not None:
                self._view.release()
            if self._map is not None:
                self._map.close()
        except BufferError:  # a view handed out is still held somewhere: the map goes with it
            pass

    def view(self, member: Member) -> memoryview | None:
        m = self._view
        if m is None or member.size != member.compressed_size:
            return None
        start = data_start(member, lambda at, n: bytes(m[at:at + n]))
        if start is None or start + member.size > len(m):
            return None
        return m[start:start + member.size]
