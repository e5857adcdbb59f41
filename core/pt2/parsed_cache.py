"""A disk cache of parsed programs, so opening a `.pt2` a second time skips its JSON (issue 32).

Not the worker's `ProgramCache` (core/jobs/program_cache.py, torch programs kept in a warm worker): this one holds
what `read_archive` returned, the `Archive` model, in the user's cache folder (`cache_root() / "programs"`).

Key and checks: an entry's file name is a hash of the archive's size, mtime and zip listing as stored (every
member's name, size, CRC and offset: core/pt2/zip_listing.py reads it in two reads; no `zipfile` is opened for an
archive torch wrote, on a reopen or a first open, whose members are read where they lie, core/pt2/stored_members.py,
their CRCs checked beside),
found without reading any member; inside, its header holds a SHA-256 of the archive's content (the listing and the
bytes of every JSON and text member the reader reads, hashed where they lie in the file) and of `FORMAT_VERSION`
(what an entry holds and how: bumped by hand whenever that changes), compared with the file on disk before the entry
is used (the hash runs on another thread while the entry is decoded), and a CRC32 of its own payload. A stale entry
(the file changed, or an entry of another format version), a truncated or corrupt one, one this version cannot
decode: each is a miss, and the archive is read from its JSON as before. The cache is optional, whatever fails in it
(a folder that cannot be read or written, a damaged entry, a full disk, a member it cannot read in place) is a miss,
never a failed open: the archive is then read as `info` reads it, and a problem with the archive is said in the
reader's words. Entries are written atomically (write_atomically), touched when used, and pruned oldest first past
`PT2V_PROGRAM_CACHE_MB` (default 1024). The format registry (core/formats/registry.py) hands the cache only the
files it keeps (`.pt2` archives and AOTInductor packages), with the zip listing it read to recognise them.

Format, chosen by measuring the 135-layer program of bench/big_model.py (9,871 nodes, 15 MB of JSON):
`json.loads` alone 0.48-0.55 s, orjson 0.37-0.39 s, msgspec's JSON 0.30-0.37 s, then the reader's own 0.7 s building
the model. MessagePack decoded by msgspec (in C) reads faster than any JSON; tensor metadata (10,412 dicts of which
31 differ) is interned: stored once in a table, every value refers to its entry and shares one (read-only) dict.
Graphs are kept as columns (core/pt2/graph_columns.py says why and how): nodes are built thin, their inputs and
metadata decoded on first read. MessagePack is data only: nothing in an entry is code, nothing is unpickled or
unmarshalled. The entry is mapped with mmap and decoded from it.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import mmap
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pt2_viewer.core.model.program import Archive, Graph, StoredTensor
from pt2_viewer.core.model.tensor_meta import tensor_meta_or_none
from pt2_viewer.core.pt2 import archive as zipfiles
from pt2_viewer.core.pt2 import graph_columns as columns
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.reader import read_archive, read_archive_files
from pt2_viewer.core.pt2.stored_members import StoredMembers, stored_data
from pt2_viewer.core.pt2.zip_listing import Member, ZipListing, read_listing
from pt2_viewer.core.util.files import write_atomically

# What an entry holds and how it is laid out: bump it whenever a change would make an entry written before decode
# differently (a field added to, removed from or retyped in a dataclass the entry holds: Archive, Program, Graph,
# Node, Value, TensorMeta, ... in core/model/; graph_columns.py's columns or extension codes; what the reader puts
# in the model). Entries of another version are stale: a miss, then rewritten. tests/core/pt2/test_cache_version.py
# keeps the dataclasses' layout at this version and fails when it changes without a bump.
FORMAT_VERSION = 6
MAGIC = b"PT2VPC%02d" % FORMAT_VERSION
HEADER = struct.Struct("<8s32sIQ")  # magic, content digest, payload crc32, length of the metadata table
DEFAULT_LIMIT_MB = 1024
_TEXT_MEMBERS = ("archive_format", "archive_version", "byteorder")
_EXT_META = 4  # a stored tensor's metadata, by its place in the entry's table (1-3: graph_columns.py)


def cache_root() -> Path:
    """This viewer's folder in the user's cache: `$PT2V_CACHE_DIR` (tests), else `$XDG_CACHE_HOME/pt2-viewer`, else
    `~/.cache/pt2-viewer`. The layout cache and this one are folders in it."""
    root = os.environ.get("PT2V_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "pt2-viewer"


class ParsedProgramCache:
    """`read(path)`: the archive's model from the cache, or from its JSON (then stored). Safe to share between
    processes: entries are written atomically and checked when read."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, limit_bytes: int | None = None) -> None:
        self.directory = Path(directory) if directory is not None else cache_root() / "programs"
        if limit_bytes is None:
            limit_bytes = int(float(os.environ.get("PT2V_PROGRAM_CACHE_MB", DEFAULT_LIMIT_MB)) * 1024 * 1024)
        self.limit_bytes = limit_bytes
        self.hits = self.misses = 0

    def read(self, path: str | os.PathLike[str]) -> Archive:
        """What `read_archive(path)` returns; `ArchiveError` as it raises. A cache that cannot be read or written
        costs only time."""
        archive, store = self.read_deferred(path)
        if store is not None:
            store()
        return archive

    def read_deferred(self, path: str | os.PathLike[str], on_miss: Callable[[], object] | None = None,
                      listing: ZipListing | None = None) -> tuple[Archive, Callable[[], bool] | None]:
        """`read`, with the entry's writing on a miss left to the caller: the window shows the program first, then
        stores it (encoding 10k nodes takes a few tenths of a second). `on_miss` is called as soon as the program is
        known not to come from the cache (no entry by its size, mtime and listing; or no cache for it: none wanted,
        a zip this cache does not key, a cache that fails), before its JSON is read: the window starts its layout
        child then, as that program's layouts will likely be needed. `listing`: the zip's central directory, when
        the caller read it already (the format registry does, to recognise the file)."""
        keyed = self._keyed(path, listing)
        if keyed is None:  # no cache wanted, not a zip this cache keys, or a cache that fails: read as `info` does
            if on_miss is not None:
                on_miss()
            return read_archive(path), None
        found, before, entry = keyed
        if _exists(entry):  # a likely hit: its content is hashed on the other core while the entry is decoded
            cached = self._load(entry, path, found)
            if cached is not None:
                self.hits += 1
                cached.path, cached.root, cached.entries = str(path), found.root, list(found.entries)
                return cached, None
        elif on_miss is not None:  # a sure miss
            on_miss()
        self.misses += 1
        return self._read_miss(path, found, before, entry)

    def _keyed(self, path: str | os.PathLike[str], listing: ZipListing | None,
               ) -> tuple[_Listing, os.stat_result, Path] | None:
        """The archive's listing, its stat before reading and its entry's path; None when there is no cache for it."""
        if self.limit_bytes <= 0:
            return None
        try:
            found = _listing(path, listing)
            if found is None:
                return None
            before = os.stat(path)
            return found, before, self._entry(before, found)
        except Exception:  # the cache's own reading failed: the file is read without it, and its reader says why
            return None

    def _read_miss(self, path: str | os.PathLike[str], listing: _Listing, before: os.stat_result, entry: Path,
                   ) -> tuple[Archive, Callable[[], bool] | None]:
        """A miss: the members read (in place where they are stored plainly), handed to the reader and hashed on the
        other core meanwhile; the entry's writing returned. Whatever the cache's own reading cannot do is left to the
        reader, which words the archive's problem as `info` does."""
        try:
            opened = _read_in_place(path, listing)
        except Exception:  # the cache's own reading failed: zipfile reads the members instead
            opened = None
        if opened is None:  # a member not stored plainly (compressed, say): through zipfile, which checks its CRC
            files = zipfiles.open_archive(path)  # no zip zipfile reads: said as `read_archive` (and `info`) say it
            try:
                members = _read_members(files, listing)
            except ArchiveError:  # a member the reader may never read (or reads under another limit): its words
                files.close()
                return read_archive(path), None
            crc_checked = True
        else:
            files, members = opened
            crc_checked = False
        try:  # the members are handed to the reader, and hashed (and CRC-checked) on the other core meanwhile
            job = _Digest(functools.partial(_digest_of, listing, _handed_over(members), not crc_checked))
            del members
            try:
                archive = read_archive_files(files)
            except ArchiveError:
                job.join()
                if not isinstance(job.error, _Damaged):
                    raise
            job.join()
        finally:
            files.close()
        if isinstance(job.error, _Damaged):  # a member's bytes are not what the zip says: zipfile words why
            return read_archive(path), None
        if job.error is not None or not _unchanged(path, before):
            return archive, None  # not hashed (the cache failed), or replaced while it was read: not stored
        digest = job.result()
        return archive, lambda: self.store(entry, digest, archive)

    def entry_path(self, path: str | os.PathLike[str]) -> Path:
        """Where the entry of the `.pt2` at `path` is (or would be) kept."""
        listing = _listing(path)
        if listing is None:
            raise ArchiveError(f"'{path}' is not a zip this cache keys.", path=str(path))
        return self._entry(os.stat(path), listing)

    # -- keys ---------------------------------------------------------------------------------------------------
    def _entry(self, st: os.stat_result, listing: _Listing) -> Path:
        """The entry's path, from the file's size and mtime and its zip listing as stored (every member's name,
        size, CRC and offset): found without reading any member."""
        h = hashlib.blake2b(f"{st.st_size}\n{st.st_mtime_ns}\n".encode(), digest_size=20)
        h.update(listing.raw)
        name = h.hexdigest()
        return self.directory / name[:2] / f"{name}.msgpack"

    # -- reading ------------------------------------------------------------------------------------------------
    def _load(self, entry: Path, path: str | os.PathLike[str], listing: _Listing) -> Archive | None:
        """The entry's archive, if it is this file's; None on anything else (stale, damaged, unreadable: a miss)."""
        job = _Digest(lambda: _digest_in_place(path, listing))
        try:
            with open(entry, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                archive = _decode(memoryview(m), job.result)
        except Exception:  # missing, empty (mmap refuses), unreadable, damaged past the checks: a miss
            archive = None
        job.join()
        if archive is not None:
            try:
                os.utime(entry)  # used now: pruned last
            except OSError:
                pass
        return archive

    # -- writing ------------------------------------------------------------------------------------------------
    def store(self, entry: Path, digest: bytes, archive: Archive) -> bool:
        """Write `archive` under `entry`, then prune; False when it cannot be stored (a kind of argument this format
        does not hold, a full disk, anything else): the cache is optional."""
        try:
            write_atomically(entry, _encode(archive, digest))
            self.prune()
        except Exception:  # a kind of argument the format does not hold, a full disk, a folder not writable
            return False
        return True

    def prune(self) -> None:
        """Delete the least recently used entries until the folder is within its limit."""
        try:
            entries = [(p.stat(), p) for p in self.directory.glob("*/*.msgpack")]
        except OSError:
            return
        total = sum(st.st_size for st, _ in entries)
        for st, p in sorted(entries, key=lambda e: e[0].st_mtime_ns):
            if total <= self.limit_bytes:
                break
            try:
                p.unlink()
            except OSError:
                continue
            total -= st.st_size


def _exists(entry: Path) -> bool:
    try:
        return entry.exists()
    except OSError:  # a folder that cannot be searched (permission denied): no entry to use
        return False


def _unchanged(path: str | os.PathLike[str], before: os.stat_result) -> bool:
    """Whether the file at `path` is still the one `before` describes (not replaced or removed while read)."""
    try:
        now = os.stat(path)
    except OSError:
        return False
    return (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns) == (
        before.st_ino, before.st_dev, before.st_size, before.st_mtime_ns)


@dataclass(frozen=True)
class _Listing:
    """What the cache needs of an archive's zip listing: the listing as stored (the key), the archive's root folder
    and files as `open_archive` names them, and the members whose bytes the digest covers (JSON and text), by their
    names relative to the root, sorted."""

    raw: bytes
    root: str
    entries: list[str]
    hashed: list[tuple[str, Member]]
    members: list[Member]  # every member, in the directory's order


def _listing(path: str | os.PathLike[str], found: ZipListing | None = None) -> _Listing | None:
    """The cache's view of the zip at `path` (its listing `found`, when read already), or None for a zip it does
    not key."""
    found = found or read_listing(path)
    if found is None:
        return None
    root, paths = zipfiles.member_paths([m.name for m in found.members])
    by_name = {m.name: m for m in found.members}
    under_root = {rel: by_name[name] for name, rel in paths}
    entries = sorted(under_root)
    hashed = [(rel, under_root[rel]) for rel in entries if rel.endswith(".json") or rel in _TEXT_MEMBERS]
    return _Listing(found.raw, root, entries, hashed, found.members)


def _hasher(listing: _Listing) -> Any:
    """The digest of an archive's content (its listing, JSON and text members) and of the entry's format version,
    which an entry must hold to be used; `_add` feeds it each member."""
    h = hashlib.sha256()  # with the CPU's SHA instructions 2.4x blake2b's speed (140 MB: 0.08 s against 0.2 s)
    h.update(MAGIC)
    h.update(listing.raw)
    return h


def _add(h: Any, name: str, data: bytes | memoryview) -> None:
    h.update(f"\n{name}\t{len(data)}\n".encode())
    h.update(data)


def _digest_read(files: zipfiles.ArchiveFiles, listing: _Listing) -> bytes:
    """The digest, reading each member through the zip, one at a time."""
    return _digest_of(listing, ((name, files.read_bytes(name)) for name, _member in listing.hashed))


def _read_members(files: zipfiles.ArchiveFiles, listing: _Listing) -> list[tuple[str, bytes]]:
    """The members the digest covers, read through the zip (CRC checked) and handed to the reader (a miss)."""
    members = []
    for name, _member in listing.hashed:
        data = files.read_bytes(name)
        files.keep(name, data)
        members.append((name, data))
    return members


def _read_in_place(path: str | os.PathLike[str], listing: _Listing,
                   ) -> tuple[zipfiles.ArchiveFiles, list[tuple[str, bytes]]] | None:
    """A miss's files, and the members the digest covers, read where they lie in the file: their CRCs are left to
    `_digest_of`, on the other core, and no `zipfile` is opened (its directory parsed again, its reads and CRCs took
    27-40 ms of the reading thread at 10k nodes in a fresh process, this 9-10 ms). None when a member is not stored
    plainly, its local header does not match the directory, or its stated size is one this does not read (more than
    the reader reads, or past the file's end: a hostile ZIP64 size): then `zipfile` reads the archive and the
    reader says what is wrong."""
    members: list[tuple[str, bytes]] = []
    try:
        with open(path, "rb") as f:
            file_size = os.fstat(f.fileno()).st_size
            for name, member in listing.hashed:
                data = stored_data(f, member, file_size, zipfiles.MAX_JSON_BYTES)
                if data is None:
                    return None
                members.append((name, data))
    except OSError:
        return None
    files = zipfiles.files_of(Path(path), [(m.name, m.size, m.compressed_size, m.crc) for m in listing.members])
    for name, data in members:
        files.keep(name, data)
    return files, members


class _Damaged(Exception):
    """A member's bytes whose CRC-32 is not the one the zip lists."""


def _handed_over(members: list[tuple[str, bytes]]) -> Iterator[tuple[str, bytes]]:
    """`members`, each taken out of the list as it is hashed, so its bytes are the reader's alone once hashed."""
    while members:
        yield members.pop(0)


def _digest_of(listing: _Listing, members: Iterable[tuple[str, bytes]], check_crc: bool = False) -> bytes:
    """The digest of `members` (name, bytes), in the listing's order; `check_crc`: each one's CRC-32 checked against
    the listing's too (`_Damaged` if not), as zipfile does when it reads a member. On a miss it runs on a `_Digest`
    thread while the reader parses them: hashing 14 MB of JSON at 10k nodes took 10 ms of the reading thread, and
    both hashlib and zlib let go of the GIL for a large buffer."""
    h = _hasher(listing)
    crcs = iter(listing.hashed)
    for name, data in members:
        if check_crc and zlib.crc32(data) != next(crcs)[1].crc:
            raise _Damaged(name)
        _add(h, name, data)
    return bytes(h.digest())


def _digest_in_place(path: str | os.PathLike[str], listing: _Listing) -> bytes:
    """The digest, hashing the members where they lie in the file (a likely hit): through one mmap, nothing copied
    out of the page cache and no zipfile (0.2 s at 100k nodes). A member it cannot find so (compressed, encrypted,
    outside the file) has the whole digest read through the zip instead."""
    h = _hasher(listing)
    with StoredMembers(path) as stored:
        for name, member in listing.hashed:
            data = stored.view(member)
            if data is None:
                break
            _add(h, name, data)
            del data
        else:
            return bytes(h.digest())
    files = zipfiles.open_archive(path)
    try:
        return _digest_read(files, listing)
    finally:
        files.close()


class _Digest(threading.Thread):
    """A digest computed on another thread (`_digest_in_place` while the entry is decoded on a likely hit,
    `_digest_of` while the reader parses on a miss): hashlib lets go of the GIL while it hashes a large buffer, so on
    a second core the 140 MB of a 100k-node program (0.12 s) cost no wall time. `result()` waits for it, and raises
    what it raised."""

    def __init__(self, work: Callable[[], bytes]) -> None:
        super().__init__(name="parsed-program digest", daemon=True)
        self._work = work
        self._value: bytes | None = None
        self._error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as e:  # handed to the reading thread by result()
            self._error = e

    @property
    def error(self) -> BaseException | None:
        """What the work raised, once it has finished (None: nothing, or not finished)."""
        return self._error

    def result(self) -> bytes:
        self.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def _encode(archive: Archive, digest: bytes) -> bytes:
    import msgspec

    metas: dict[bytes, int] = {}
    table: list[Any] = []

    def meta_id(meta: Any) -> int:
        if meta is None:
            return -1
        key = msgspec.msgpack.encode(meta)
        if key not in metas:
            metas[key] = len(table)
            table.append(meta)
        return metas[key]

    def stored(ts: list[StoredTensor]) -> list[StoredTensor]:
        return [dataclasses.replace(t, meta_json=_Meta(meta_id(t.meta_json))) for t in ts]

    empty = Graph("", [], [], {}, [], [])
    shadow = dataclasses.replace(archive, programs=[
        dataclasses.replace(p, graph=empty, weights=stored(p.weights), constants=stored(p.constants))
        for p in archive.programs])
    graphs = [columns.encode_graph(p.graph, meta_id) for p in archive.programs]

    def enc_hook(o: Any) -> Any:
        if isinstance(o, _Meta):
            return None if o.index < 0 else msgspec.msgpack.Ext(_EXT_META, struct.pack("<I", o.index))
        return columns.enc_hook(o)

    encoder = msgspec.msgpack.Encoder(enc_hook=enc_hook)
    meta_bytes = encoder.encode(table)
    body = meta_bytes + encoder.encode([encoder.encode(shadow), graphs])
    return HEADER.pack(MAGIC, digest, zlib.crc32(body), len(meta_bytes)) + body


class _Meta:
    """A stored tensor's metadata, by its place in the entry's table (-1: none)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _decode(data: memoryview, digest: Callable[[], bytes]) -> Archive | None:
    """The archive in an entry, or None when it is not this file's (stale), corrupt or of another format. `digest()`
    is the file's, compared with the entry's once the entry is decoded (it may still be computing meanwhile)."""
    import msgspec

    if len(data) < HEADER.size:
        return None
    magic, stored_digest, crc, meta_len = HEADER.unpack_from(data)
    body = data[HEADER.size:]
    if magic != MAGIC or meta_len > len(body) or zlib.crc32(body) != crc:
        return None
    try:
        table = msgspec.msgpack.decode(body[:meta_len], type=list[Any])
        parsed = [tensor_meta_or_none(m) for m in table]  # each distinct metadata once (31 at 10k nodes)

        def ext_hook(code: int, payload: memoryview) -> Any:
            if code == _EXT_META:
                return table[struct.unpack("<I", payload)[0]]
            return columns.ext_hook(code, payload)

        shadow, graphs = msgspec.msgpack.decode(body[meta_len:], type=tuple[bytes, list[dict[str, Any]]])
        archive = msgspec.msgpack.Decoder(Archive, ext_hook=ext_hook).decode(shadow)
        if len(graphs) != len(archive.programs):
            return None
        by_id = {id(m): p for m, p in zip(table, parsed, strict=True)}
        for program, block in zip(archive.programs, graphs, strict=True):
            program.graph = columns.decode_graph(block, table, parsed)
            for t in program.weights + program.constants:
                if t.meta_json is not None:
                    object.__setattr__(t, "meta", by_id[id(t.meta_json)])  # its fields inline (core/util/lazy.py)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, IndexError, KeyError, TypeError, struct.error,
            UnicodeDecodeError):
        return None
    return archive if digest() == stored_digest else None  # another file's, or this viewer's code changed: stale
