"""What recognising a file may look at, each read at most once however many formats ask: its name, its first bytes,
a folder's entries, a zip's member names.

The registry (core/formats/registry.py) asks each format in turn whether it knows the file; a `.pte` needs 8 bytes,
an AOTInductor package the zip's listing, a torch.compile trace folder its entries. A zip's listing is read as the
parsed-program cache reads it (core/pt2/zip_listing.py: the central directory in two reads, no `zipfile`), and the
cache is handed the same listing, so telling an AOTInductor package from an export archive reads nothing twice.
"""
from __future__ import annotations

import os
import zipfile
from functools import cached_property
from pathlib import Path

from pt2_viewer.core.pt2 import archive as zipfiles
from pt2_viewer.core.pt2.zip_listing import ZipListing, read_listing

HEAD_BYTES = 64
ZIP_MAGIC = b"PK\x03\x04"  # a zip's first local header (an empty zip starts with its end record: no member to read)


class Probe:
    """One file (or folder) as recognition sees it; every fact is read when first asked for, then kept."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    @cached_property
    def suffix(self) -> str:
        """The extension, lower case (`.pt2`)."""
        return self.path.suffix.lower()

    @cached_property
    def is_folder(self) -> bool:
        return self.path.is_dir()

    @cached_property
    def head(self) -> bytes:
        """The file's first HEAD_BYTES bytes; empty for a folder, a missing or unreadable file."""
        if self.is_folder:
            return b""
        try:
            with open(self.path, "rb") as f:
                return f.read(HEAD_BYTES)
        except OSError:
            return b""

    @cached_property
    def folder_entries(self) -> list[str]:
        """The names in a folder (not recursive); empty for a file or a folder that cannot be listed."""
        if not self.is_folder:
            return []
        try:
            return sorted(os.listdir(self.path))
        except OSError:
            return []

    @cached_property
    def zip_listing(self) -> ZipListing | None:
        """The zip's central directory as stored, for a file that starts as a zip does; None otherwise, or for a zip
        that `read_listing` does not read (then `zip_files` asks zipfile)."""
        return read_listing(self.path) if self.head.startswith(ZIP_MAGIC) else None

    @cached_property
    def zip_files(self) -> list[str]:
        """The zip's files by their paths under its root folder, as the `.pt2` reader names them
        (core/pt2/archive.py `member_paths`); empty for what is not a readable zip."""
        if not self.head.startswith(ZIP_MAGIC):
            return []
        listing = self.zip_listing
        if listing is not None:
            names = [m.name for m in listing.members]
        else:
            try:
                with zipfile.ZipFile(self.path) as zf:
                    names = zf.namelist()
            except (OSError, zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, RuntimeError):
                return []
        return [rel for _name, rel in zipfiles.member_paths(names)[1]]
