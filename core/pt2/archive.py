"""Open a `.pt2` zip archive and read its JSON members, safely and without torch.

A `.pt2` written by `torch.export.save` is a zip whose entries sit under one root folder (named after the file stem
at save time, so a renamed file keeps its old root: we list entries rather than guess). Programs are
`ROOT/models/NAME.json`; weights and constants are described by `ROOT/data/weights/NAME_weights_config.json` and
`ROOT/data/constants/NAME_constants_config.json`, whose bytes we never read. AOTInductor packages keep compiled code
under `ROOT/data/aotinductor/`. Nothing here unpickles, and every size is checked before reading.
"""
from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.pt2.errors import ArchiveError

# A program JSON of a 100k-node model is tens of MB; anything past this is not a program we can show.
MAX_JSON_BYTES = 512 * 1024 * 1024
MAX_SMALL_BYTES = 1024 * 1024  # version files, configs of a few entries
MODELS_DIR = "models/"
WEIGHTS_CONFIG = "data/weights/{}_weights_config.json"
CONSTANTS_CONFIG = "data/constants/{}_constants_config.json"
SAMPLE_INPUTS = "data/sample_inputs/{}.pt"
AOTI_DIR = "data/aotinductor/"


@dataclass
class ZipEntry:
    """One member of the archive's zip: its path under the root, sizes and CRC."""

    name: str  # path relative to the archive root
    size: int
    compressed_size: int
    crc: int = 0  # the zip's CRC-32 of the member (what the parsed-program cache's key lists)


@dataclass
class ArchiveFiles:
    """The entries of a `.pt2` zip, relative to its root folder, and a way to read the small ones."""

    path: Path
    root: str
    entries: dict[str, ZipEntry] = field(default_factory=dict)
    # Names the zip holds more than once, ignoring case (torch's zip reader matches names without case): a reader
    # could see one member and torch another.
    duplicates: list[str] = field(default_factory=list)
    _zip: zipfile.ZipFile | None = None
    # Members already read whole (the parsed-program cache hashes them first), handed to the next read_bytes once
    _kept: dict[str, bytes] = field(default_factory=dict)

    def keep(self, name: str, data: bytes) -> None:
        """Hand `data`, read from member `name`, to the next `read_bytes(name)` instead of reading it again."""
        self._kept[name] = data

    def has(self, name: str) -> bool:
        return name in self.entries

    def names_under(self, prefix: str) -> list[str]:
        return sorted(n for n in self.entries if n.startswith(prefix))

    def read_bytes(self, name: str, limit: int = MAX_JSON_BYTES) -> bytes:
        kept = self._kept.pop(name, None)
        if kept is not None and len(kept) <= limit:
            return kept
        entry = self.entries.get(name)
        if entry is None:
            raise ArchiveError(f"'{self.path.name}' has no entry '{name}'.", path=str(self.path), member=name)
        if entry.size > limit:
            raise ArchiveError(
                f"In '{self.path.name}', the entry '{name}' is {entry.size / 1e6:.1f} MB ({entry.size:,} bytes), more "
                f"than the {limit / 1e6:.1f} MB ({limit:,} bytes) this viewer reads. The file may be damaged, or not a "
                "torch.export archive.",
                path=str(self.path),
                member=name,
            )
        if self._zip is None:  # built from a listing (the parsed-program cache's miss): opened when first needed
            self._zip = open_zip(self.path)
        try:
            with self._zip.open(self._full(name)) as f:
                data = f.read(limit + 1)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError, RuntimeError) as e:
            raise ArchiveError(
                f"In '{self.path.name}', the entry '{name}' could not be read ({e}). The file is damaged or truncated: "
                "save or copy it again.",
                path=str(self.path),
                member=name,
            ) from None
        if len(data) > limit:
            raise ArchiveError(f"In '{self.path.name}', the entry '{name}' is larger than it claims to be: the file "
                               "is damaged.", path=str(self.path), member=name)
        return data

    def read_text(self, name: str, limit: int = MAX_SMALL_BYTES) -> str:
        """A small text member, with control characters shown as '?': it may end up in a message on a terminal."""
        text = self.read_bytes(name, limit).decode("utf-8", errors="replace").strip()
        return "".join(c if c.isprintable() else "?" for c in text)

    def read_json(self, name: str, limit: int = MAX_JSON_BYTES, parse: Callable[[bytes], Any] | None = None) -> Any:
        """Member `name` parsed (by `parse`, or `parse_json`); ArchiveError naming it when it is not JSON."""
        data = self.read_bytes(name, limit)
        try:
            return (parse or parse_json)(data)
        except (ValueError, RecursionError) as e:
            raise ArchiveError(
                f"In '{self.path.name}', the entry '{name}' is not valid JSON ({e}). The archive is damaged, or was "
                "not written by torch.export.save.",
                path=str(self.path),
                member=name,
            ) from None

    def close(self) -> None:
        self._kept.clear()
        if self._zip is not None:
            self._zip.close()
            self._zip = None

    def _full(self, name: str) -> str:
        return f"{self.root}/{name}" if self.root else name


def parse_json(data: bytes) -> Any:
    """msgspec's JSON parser (in C: 0.05 s of CPU for the 135-layer program's 15 MB, against 0.10 s for `json.loads`
    with a yield hook; bench/README.md, issue 32). It gives the same objects `json.loads` does for any document it
    accepts; what it refuses (NaN and Infinity literals, which `json.dumps` writes for non-finite floats, lone
    surrogates, floats past the double range, malformed JSON) goes to `json.loads`, which reads the first ones as
    Python does and words the error for the rest. It holds the GIL for its whole parse (about 50 ms here). A
    worker's Python (the user's torch environment) may not have msgspec: there, `json.loads` reads it all."""
    try:
        import msgspec
    except ImportError:
        return json.loads(data)
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        return json.loads(data)


def open_archive(path: str | os.PathLike[str]) -> ArchiveFiles:
    """List a `.pt2`'s entries. Raises `ArchiveError` for anything that is not a readable zip."""
    p = Path(path)
    if not p.exists():
        raise ArchiveError(f"'{p}' does not exist. Check the path.", path=str(p))
    if p.is_dir():
        raise ArchiveError(f"'{p}' is a folder, not a .pt2 file. Choose the archive file itself.", path=str(p))
    zf = open_zip(p)
    infos = zf.infolist()
    return files_of(p, [(i.filename, i.file_size, i.compress_size, i.CRC) for i in infos], zf)


def files_of(path: Path, members: list[tuple[str, int, int, int]], zf: zipfile.ZipFile | None = None) -> ArchiveFiles:
    """The `ArchiveFiles` of a zip whose members are `(name as stored, size, compressed size, CRC)`, in the
    directory's order. One rule for `open_archive` and for the parsed-program cache, which lists the zip itself
    (core/pt2/zip_listing.py) and hands no `zf`: the zip is then opened only if a member is read through it."""
    root, paths = member_paths([m[0] for m in members])
    files = ArchiveFiles(path=path, root=root, _zip=zf)
    seen: set[str] = set()
    for name, *_ in members:
        key = name.lower()
        if key in seen:
            files.duplicates.append(name)
        seen.add(key)
    by_name = {m[0]: m for m in members}  # a name listed twice: the last, as zipfile reads it
    for name, rel in paths:
        _, size, compressed_size, crc = by_name[name]
        files.entries[rel] = ZipEntry(rel, size, compressed_size, crc)
    return files


def open_zip(p: Path) -> zipfile.ZipFile:
    """`zipfile.ZipFile(p)`; `ArchiveError` saying what `p` is, when it is not a readable zip."""
    try:
        return zipfile.ZipFile(p)
    except PermissionError:
        raise ArchiveError(f"'{p}' cannot be read: permission denied.", path=str(p)) from None
    except (zipfile.BadZipFile, EOFError, ValueError) as e:
        # each fact once: an empty file is only empty; zipfile's own words only where they add to "not a valid zip"
        if not p.stat().st_size:
            raise ArchiveError(f"'{p.name}' is empty (0 bytes), not a .pt2 archive; a .pt2 is written by "
                               "torch.export.save.", path=str(p)) from None
        raise ArchiveError(_not_a_zip(p, e), path=str(p)) from None
    except OSError as e:
        raise ArchiveError(f"'{p}' cannot be read: {e.strerror or e}.", path=str(p)) from None


def _not_a_zip(p: Path, e: BaseException) -> str:
    """Why `p` is no .pt2, by what it starts with: only a file that begins as a zip does may be a truncated one."""
    detail = "" if str(e).rstrip(".").lower() in ("file is not a zip file", "") else f" ({e})"
    try:
        with open(p, "rb") as f:
            head = f.read(512)
    except OSError:
        head = b""
    if head.startswith(b"PK"):
        return (f"'{p.name}' is not a .pt2 archive: it is not a valid zip file{detail}. It may be truncated (an "
                "interrupted copy or download); a .pt2 is written by torch.export.save.")
    what = "a text file" if _looks_like_text(head) else "not a zip file"
    return f"'{p.name}' is not a .pt2 archive: it is {what}. A .pt2 is the zip file that torch.export.save writes."


def _looks_like_text(head: bytes) -> bool:
    """UTF-8 text with no control characters but line breaks and tabs (one bad byte allowed: a character cut by the
    read)."""
    text = head.decode("utf-8", errors="replace")
    return bool(text) and text.count("\ufffd") <= 1 and all(c.isprintable() or c in "\n\r\t" for c in text)


def member_paths(names: list[str]) -> tuple[str, list[tuple[str, str]]]:
    """The root folder of a zip's member `names` and, in their order, each file (not folder) under it with its path
    there: `(name, path)`, the path being what `ArchiveFiles.entries` is keyed by. One rule for `open_archive` and
    the parsed-program cache's listing."""
    files = [n for n in names if not n.endswith("/")]
    root = _root_folder(files)
    prefix = f"{root}/" if root else ""
    return root, [(n, n[len(prefix):]) for n in files if n.startswith(prefix)]


def _root_folder(names: list[str]) -> str:
    """The single top-level folder every entry sits under, or '' when entries are at the top level."""
    tops = {n.split("/", 1)[0] for n in names if "/" in n}
    if len(tops) == 1 and all("/" in n for n in names):
        return tops.pop()
    # Prefer the folder that holds the archive_format marker (torch's own rule).
    for n in names:
        if n.endswith("/archive_format") and n.count("/") == 1:
            return n.split("/", 1)[0]
    return ""
