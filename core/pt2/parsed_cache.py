"""A disk cache of parsed programs, so opening a `.pt2` a second time skips its JSON (issue 32).

Not the worker's `ProgramCache` (core/jobs/program_cache.py, torch programs kept in a warm worker): this one holds
what `read_archive` returned, the `Archive` model, in the user's cache folder (`cache_root() / "programs"`).

Key and checks: an entry's file name is a hash of the archive's size, mtime and zip listing (names, sizes, CRCs),
found without reading any member; inside, its header holds a blake2b of the archive's content (the listing and the
bytes of every JSON and text member the reader reads) and of the code that read it (the reader and model modules),
compared with the file on disk before the entry is used, and a CRC32 of its own payload. A stale entry (the file or
this viewer changed), a truncated or corrupt one, one this version cannot decode: each is a miss, and the archive is
read from its JSON as before. Entries are written atomically (write_atomically), touched when used, and pruned oldest
first past `PT2V_PROGRAM_CACHE_MB` (default 1024).

Format, chosen by measuring the 135-layer program of bench/big_model.py (9,871 nodes, 15 MB of JSON):
`json.loads` alone 0.48-0.55 s, orjson 0.37-0.39 s, msgspec's JSON 0.30-0.37 s, then the reader's own 0.7 s building
the model. MessagePack decoded by msgspec straight into the model's dataclasses (in C, no per-node Python code) does
both at once; of its 0.5 s, 0.22 s went into 10,412 tensor-metadata dicts of which 31 differ, so those are interned:
stored once in a table, every value refers to its entry and shares one (read-only) dict. MessagePack is data only:
nothing in an entry is code, nothing is unpickled or unmarshalled. The entry is mapped with mmap and decoded from it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import mmap
import os
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.model.program import Archive, Argument, Graph, Node, Ref, StoredTensor, Value
from pt2_viewer.core.model.tensor_meta import TensorMeta, tensor_meta_or_none
from pt2_viewer.core.pt2 import archive as zipfiles
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.reader import read_archive, read_archive_files
from pt2_viewer.core.pte.magic import is_pte
from pt2_viewer.core.util.files import write_atomically

MAGIC = b"PT2VPC01"
HEADER = struct.Struct("<8s32sIQ")  # magic, content digest, payload crc32, length of the metadata table
DEFAULT_LIMIT_MB = 1024
_TEXT_MEMBERS = ("archive_format", "archive_version", "byteorder")
# The modules whose code decides what an entry holds: an edit to any of them makes every entry stale.
_CODE_MODULES = ("pt2_viewer.core.pt2.reader", "pt2_viewer.core.pt2.archive", "pt2_viewer.core.model.program",
                 "pt2_viewer.core.model.tensor_meta", "pt2_viewer.core.model.metadata", __name__)
_EXT_REF, _EXT_GRAPH, _EXT_COMPLEX, _EXT_META = 1, 2, 3, 4


def cache_root() -> Path:
    """This viewer's folder in the user's cache: `$PT2V_CACHE_DIR` (tests), else `$XDG_CACHE_HOME/pt2-viewer`, else
    `~/.cache/pt2-viewer`. The layout cache and this one are folders in it."""
    root = os.environ.get("PT2V_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "pt2-viewer"


class _Mark:
    """What the encoder writes as a MessagePack extension (msgspec writes a dataclass, `Ref` included, as a map)."""

    __slots__ = ("code", "payload")

    def __init__(self, code: int, payload: bytes) -> None:
        self.code, self.payload = code, payload


class _SubgraphMark:
    """Where an argument held a subgraph: put back as the node's own `Graph` object after decoding."""

    def __init__(self, name: str) -> None:
        self.name = name


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

    def read_deferred(self, path: str | os.PathLike[str]) -> tuple[Archive, Callable[[], bool] | None]:
        """`read`, with the entry's writing on a miss left to the caller: the window shows the program first, then
        stores it (encoding 10k nodes takes a few tenths of a second)."""

        if self.limit_bytes <= 0 or is_pte(path):  # no cache wanted, or an ExecuTorch program: read as before
            return read_archive(path), None
        files = zipfiles.open_archive(path)
        try:
            entry, digest = self._locate(files)
            cached = self._load(entry, digest)
            if cached is not None:
                self.hits += 1
                cached.path, cached.root, cached.entries = str(files.path), files.root, sorted(files.entries)
                return cached, None
            self.misses += 1
            archive = read_archive_files(files)
        finally:
            files.close()
        return archive, lambda: self.store(entry, digest, archive)

    def entry_path(self, path: str | os.PathLike[str]) -> Path:
        """Where the entry of the `.pt2` at `path` is (or would be) kept."""
        files = zipfiles.open_archive(path)
        try:
            return self._locate(files)[0]
        finally:
            files.close()

    def has_entry(self, path: str | os.PathLike[str]) -> bool:
        """Whether an entry is kept for the `.pt2` at `path`, by its size, mtime and listing only (its content is
        checked when it is read): a few milliseconds, for a window guessing whether the program was opened before."""
        if self.limit_bytes <= 0 or is_pte(path):
            return False
        try:
            files = zipfiles.open_archive(path)
        except (ArchiveError, OSError):
            return False
        try:
            return self._entry(files)[0].exists()
        finally:
            files.close()

    # -- keys ---------------------------------------------------------------------------------------------------
    def _entry(self, files: zipfiles.ArchiveFiles) -> tuple[Path, str]:
        """The entry's path, from the file's size, mtime and listing (the listing returned too)."""
        st = files.path.stat()
        listing = "\n".join(f"{e.name}\t{e.size}\t{e.crc}" for e in sorted(
            files.entries.values(), key=lambda e: e.name))
        name = hashlib.blake2b(f"{st.st_size}\n{st.st_mtime_ns}\n{listing}".encode(), digest_size=20).hexdigest()
        return self.directory / name[:2] / f"{name}.msgpack", listing

    def _locate(self, files: zipfiles.ArchiveFiles) -> tuple[Path, bytes]:
        """The entry's path (from the file's size, mtime and listing) and the digest of its content to check."""
        entry, listing = self._entry(files)
        keep = not entry.exists()  # a sure miss: the reader takes the bytes hashed here (a hit would only hold them)
        h = hashlib.blake2b(digest_size=32)
        h.update(_code_fingerprint())
        h.update(listing.encode())
        for member in sorted(files.entries):
            if member.endswith(".json") or member in _TEXT_MEMBERS:
                data = files.read_bytes(member)
                h.update(f"\n{member}\t{len(data)}\n".encode())
                h.update(data)
                if keep:
                    files.keep(member, data)
        return entry, h.digest()

    # -- reading ------------------------------------------------------------------------------------------------
    def _load(self, entry: Path, digest: bytes) -> Archive | None:
        try:
            with open(entry, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                archive = _decode(memoryview(m), digest)
        except (OSError, ValueError):  # missing, empty (mmap refuses), unreadable
            return None
        if archive is not None:
            try:
                os.utime(entry)  # used now: pruned last
            except OSError:
                pass
        return archive

    # -- writing ------------------------------------------------------------------------------------------------
    def store(self, entry: Path, digest: bytes, archive: Archive) -> bool:
        """Write `archive` under `entry`, then prune; False when it cannot be stored (a kind of argument this format
        does not hold, a full disk): the cache is optional."""
        try:
            data = _encode(archive, digest)
        except (TypeError, ValueError, NotImplementedError, OverflowError, RecursionError):
            return False
        try:
            write_atomically(entry, data)
        except OSError:
            return False
        self.prune()
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


_fingerprint: bytes | None = None


def _code_fingerprint() -> bytes:
    global _fingerprint
    if _fingerprint is None:
        import importlib

        h = hashlib.blake2b(digest_size=16)
        h.update(MAGIC)
        for name in _CODE_MODULES:
            module = sys.modules.get(name) or importlib.import_module(name)
            h.update(Path(module.__file__ or "").read_bytes())
        _fingerprint = h.digest()
    return _fingerprint


def _encode(archive: Archive, digest: bytes) -> bytes:
    import msgspec

    metas: dict[bytes, int] = {}
    table: list[Any] = []

    def meta_ref(meta: Any) -> Any:
        if meta is None:
            return None
        key = msgspec.msgpack.encode(meta)
        if key not in metas:
            metas[key] = len(table)
            table.append(meta)
        return _Mark(_EXT_META, struct.pack("<I", metas[key]))

    def graph(g: Graph) -> Graph:
        return dataclasses.replace(
            g, values={k: dataclasses.replace(v, meta_json=meta_ref(v.meta_json)) for k, v in g.values.items()},
            nodes=[node(n) for n in g.nodes])

    def node(n: Node) -> Node:
        if not n.inputs and not n.subgraphs:
            return n
        return dataclasses.replace(n, subgraphs=[graph(s) for s in n.subgraphs],
                                   inputs=[Argument(a.name, marked(a.value), a.kind) for a in n.inputs])

    def stored(ts: list[StoredTensor]) -> list[StoredTensor]:
        return [dataclasses.replace(t, meta_json=meta_ref(t.meta_json)) for t in ts]

    shadow = dataclasses.replace(archive, programs=[
        dataclasses.replace(p, graph=graph(p.graph), weights=stored(p.weights), constants=stored(p.constants))
        for p in archive.programs])

    def enc_hook(o: Any) -> Any:
        if isinstance(o, _Mark):
            return msgspec.msgpack.Ext(o.code, o.payload)
        raise NotImplementedError(f"{type(o).__name__} is not stored in the program cache")

    encoder = msgspec.msgpack.Encoder(enc_hook=enc_hook)
    meta_bytes = encoder.encode(table)
    body = meta_bytes + encoder.encode(shadow)
    return HEADER.pack(MAGIC, digest, zlib.crc32(body), len(meta_bytes)) + body


def marked(v: Any) -> Any:
    """An argument's value with its references, subgraphs and complex numbers as extension marks."""
    if isinstance(v, Ref):
        return _Mark(_EXT_REF, v.value.encode())
    if isinstance(v, list):
        return [marked(x) for x in v]
    if isinstance(v, dict):
        return {k: marked(x) for k, x in v.items()}
    if isinstance(v, Graph):
        return _Mark(_EXT_GRAPH, v.name.encode())
    if isinstance(v, complex):
        return _Mark(_EXT_COMPLEX, struct.pack("<dd", v.real, v.imag))
    if v is None or isinstance(v, (str, int, float)):  # bool is an int
        return v
    raise NotImplementedError(f"{type(v).__name__} is not stored in the program cache")


def _decode(data: memoryview, digest: bytes) -> Archive | None:
    """The archive in an entry, or None when it is not this file's (stale), corrupt or of another format."""
    import msgspec

    if len(data) < HEADER.size:
        return None
    magic, stored_digest, crc, meta_len = HEADER.unpack_from(data)
    body = data[HEADER.size:]
    if magic != MAGIC or stored_digest != digest or meta_len > len(body) or zlib.crc32(body) != crc:
        return None
    try:
        table = msgspec.msgpack.decode(body[:meta_len])

        def ext_hook(code: int, payload: memoryview) -> Any:
            if code == _EXT_REF:
                return Ref(bytes(payload).decode())
            if code == _EXT_META:
                return table[struct.unpack("<I", payload)[0]]
            if code == _EXT_GRAPH:
                return _SubgraphMark(bytes(payload).decode())
            if code == _EXT_COMPLEX:
                real, imag = struct.unpack("<dd", payload)
                return complex(real, imag)
            raise ValueError(f"unknown extension {code}")

        archive = msgspec.msgpack.Decoder(Archive, ext_hook=ext_hook).decode(body[meta_len:])
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, IndexError, struct.error, UnicodeDecodeError):
        return None
    parsed: dict[int, TensorMeta | None] = {}
    for program in archive.programs:
        _share_metas([t for t in program.weights + program.constants], parsed)
        for _, g in program.all_graphs():
            _share_metas(list(g.values.values()), parsed)
            for node in g.nodes:
                if node.subgraphs:
                    by_name = {s.name: s for s in node.subgraphs}
                    for a in node.inputs:
                        a.value = _unmark(a.value, by_name)
    return archive


def _share_metas(holders: list[Value] | list[StoredTensor], parsed: dict[int, TensorMeta | None]) -> None:
    """Parse each interned metadata dict once and give every value holding it the same (frozen) `TensorMeta`, as
    its lazy `meta` would compute it: 31 parses instead of 12,000 at 10k nodes (shapes are in every node's label)."""
    for h in holders:
        meta_json = h.meta_json
        if meta_json is None:
            continue
        key = id(meta_json)  # the table's dicts live as long as the archive: ids are stable here
        if key not in parsed:
            parsed[key] = tensor_meta_or_none(meta_json)
        h.__dict__["meta"] = parsed[key]


def _unmark(v: Any, graphs: dict[str, Graph]) -> Any:
    if isinstance(v, _SubgraphMark):
        return graphs[v.name]
    if isinstance(v, list):
        return [_unmark(x, graphs) for x in v]
    if isinstance(v, dict):
        return {k: _unmark(x, graphs) for k, x in v.items()}
    return v

