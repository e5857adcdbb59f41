"""What goes to the server, by content: the worker code as one zip keyed by its hash, and files keyed by SHA-256.

The worker code is `pt2_viewer/__init__.py` and `pt2_viewer/core/**.py` (pure Python: nothing of the app, no Qt), zipped
in a fixed order with fixed timestamps, so one version always makes the same bytes and the same hash: the server
unpacks it once per version (`SCRATCH/code/HASH`).

A file's SHA-256 is remembered here per (path, size, modification time, inode), in the user's cache folder, so a 1 GB
program is read once to hash it, not at every job. A script goes with its folder (the files it imports or reads
beside it), up to `FOLDER_CAP_BYTES`; a bigger folder is refused with a message (`FolderTooBig`) rather than copied
by surprise, unless the user said yes to it (`allow_folder`: the window asks).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pt2_viewer.core.jobs.python_env import source_root

HASH_CHARS = 32  # of the SHA-256's hex digits: names in the server's cache
FOLDER_CAP_BYTES = 64 * 1024 * 1024
FOLDER_MAX_FILES = 2000
SKIP_DIRS = frozenset({"__pycache__", ".git", ".hg", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache"})
READ_CHUNK = 1 << 20


class FolderTooBig(ValueError):
    """A script's folder is past the cap: the user should say whether to copy it (or move the script)."""

    def __init__(self, message: str, folder: Path) -> None:
        super().__init__(message)
        self.folder = folder


_allowed_folders: set[Path] = set()  # folders the user agreed to copy whatever their size (this session)


def allow_folder(folder: Path) -> None:
    """The user said yes to copying this whole folder with its script: no cap for it from now on."""
    _allowed_folders.add(folder.resolve())


@dataclass(frozen=True)
class CodeBundle:
    digest: str
    data: bytes


@cache
def worker_code() -> CodeBundle:
    """The worker code's zip and its hash (made once per process: ~0.2 s)."""
    root = source_root() / "pt2_viewer"
    core = root / "core" if (root / "core").is_dir() else source_root() / "core"  # a wheel, or a checkout
    files = [(root / "__init__.py", "pt2_viewer/__init__.py")]
    for path in sorted(core.rglob("*.py")):
        if "__pycache__" not in path.parts:
            files.append((path, "pt2_viewer/core/" + path.relative_to(core).as_posix()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path, name in files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, path.read_bytes())
    data = buffer.getvalue()
    return CodeBundle(hashlib.sha256(data).hexdigest()[:HASH_CHARS], data)


def _hash_cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pt2-viewer" / "file-hashes.json"


def _identity(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_dev}"


def file_digest(path: Path) -> str:
    """The file's SHA-256 (shortened), from the cache when the file has not changed since it was hashed."""
    path = path.resolve()
    identity = _identity(path)
    store = _hash_cache_file()
    try:
        known = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    entry = known.get(str(path))
    if isinstance(entry, list) and len(entry) == 2 and entry[0] == identity:
        return str(entry[1])
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(READ_CHUNK):
            sha.update(chunk)
    digest = sha.hexdigest()[:HASH_CHARS]
    known[str(path)] = [identity, digest]
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        tmp = store.with_name(f".{store.name}.{os.getpid()}")
        tmp.write_text(json.dumps(known), encoding="utf-8")
        os.replace(tmp, store)
    except OSError:
        pass  # no cache: hashed again next time
    return digest


def folder_files(script: Path, cap_bytes: int = FOLDER_CAP_BYTES) -> list[Path]:
    """The files in a script's folder and below (caches and virtual environments left out), the script first."""
    script = script.resolve()
    files = [script]
    total = script.stat().st_size
    for folder, dirnames, names in os.walk(script.parent):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            path = Path(folder) / name
            if path == script or not path.is_file() or name.startswith("."):
                continue
            total += path.stat().st_size
            files.append(path)
            if (total > cap_bytes or len(files) > FOLDER_MAX_FILES) and script.parent not in _allowed_folders:
                raise FolderTooBig(
                    f"The folder of {script.name} ({script.parent}) holds more than {cap_bytes // 2**20} MB or "
                    f"{FOLDER_MAX_FILES} files, all of which would be copied to the server with it. Move the script "
                    "into a folder of its own, or raise the cap (PT2V_REMOTE_FOLDER_CAP_MB).", script.parent)
    return files
