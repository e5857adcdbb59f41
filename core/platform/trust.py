"""Remember which model scripts the user agreed to run, per file content, and which modules programs may import.

Opening a `.py` model script runs its code. The GUI asks first, and `TrustStore` remembers a "yes" for a path AND
the SHA-256 of its content, so the question comes back when the file changes (someone edited it, or a download
replaced it) but not every time the same file is opened. A `.pt2` trusted as a whole (`--trust`'s meaning) is
remembered the same way; so is a "yes" to an AOTInductor package's compiled code (`allow_native`).

A program may also name an installed module outside the libraries allowed by default (core/jobs/import_policy.py):
the window asks once per module and per worker Python, and `allowed_modules(python)` remembers the answer (what
`--allow-import MODULE` says on the command line). Stored as JSON in `$XDG_CONFIG_HOME/pt2-viewer/trusted.json`
(default `~/.config/...`); the path can be overridden.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import msgspec

from pt2_viewer.core.util.files import write_atomically

FILE_NAME = "trusted.json"


def default_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "pt2-viewer" / FILE_NAME


def content_hash(script: str | os.PathLike[str]) -> str:
    """SHA-256 of the file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(script, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class TrustStore(msgspec.Struct):
    """The user's "yes, run this script" decisions; one entry per resolved path, for one content hash."""

    path: Path

    @classmethod
    def default(cls) -> TrustStore:
        return cls(default_path())

    def is_trusted(self, script: str | os.PathLike[str]) -> bool:
        """True if the user trusted this path with exactly its current content."""
        key = _key(script)
        entry = self._load().get(key)
        if not isinstance(entry, dict):
            return False
        try:
            return entry.get("sha256") == content_hash(key)
        except OSError:
            return False

    def trust(self, script: str | os.PathLike[str]) -> None:
        """Remember "yes" for the script's current content (replacing an older decision for the same path)."""
        key = _key(script)
        entries = self._load()
        entries[key] = {"sha256": content_hash(key), "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._save(entries)

    def forget(self, script: str | os.PathLike[str]) -> None:
        entries = self._load()
        if entries.pop(_key(script), None) is not None:
            self._save(entries)

    # -- modules a program may import, per worker Python -----------------------------------------------------------
    def allowed_modules(self, python: str) -> list[str]:
        """The modules the user let programs import in this worker Python (each with its submodules)."""
        found = self._section("modules").get(python)
        return sorted(m for m in found if isinstance(m, str)) if isinstance(found, list) else []

    def allow_modules(self, python: str, modules: list[str]) -> None:
        section = self._section("modules")
        section[python] = sorted(set(self.allowed_modules(python)) | set(modules))
        self._save(self._load(), modules=section)

    # -- AOTInductor compiled code, per package path and content ---------------------------------------------------
    def native_allowed(self, package: str | os.PathLike[str]) -> bool:
        key = _key(package)
        entry = self._section("native").get(key)
        try:
            return isinstance(entry, dict) and entry.get("sha256") == content_hash(key)
        except OSError:
            return False

    def allow_native(self, package: str | os.PathLike[str]) -> None:
        key = _key(package)
        section = self._section("native")
        section[key] = {"sha256": content_hash(key), "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._save(self._load(), native=section)

    def _document(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # missing or damaged: nothing is trusted, and the next save repairs it
            return {}
        return data if isinstance(data, dict) else {}

    def _section(self, name: str) -> dict[str, Any]:
        found = self._document().get(name)
        return dict(found) if isinstance(found, dict) else {}

    def _load(self) -> dict[str, Any]:
        return self._section("scripts")

    def _save(self, entries: dict[str, Any], **sections: dict[str, Any]) -> None:
        # private: which of the user's scripts may run is the user's business
        document = {"modules": self._section("modules"), "native": self._section("native"), **sections}
        write_atomically(self.path, json.dumps({"version": 1, "scripts": entries, **document}, indent=2,
                                               sort_keys=True), private=True)


def _key(script: str | os.PathLike[str]) -> str:
    return str(Path(script).expanduser().resolve())
