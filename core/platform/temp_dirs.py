"""The app's temporary folders: one owner, so none outlives what uses it.

Jobs (export script, decompose, run) write into folders under the system temp dir. Each folder is named
`pt2v-<pid>-<kind>-<random>`, the pid being the app process that made it, so that:
- whoever made a folder removes it when done (`remove`), and the app removes all of its own at exit (`remove_own`);
- at start-up, folders left by an app that crashed are swept (`sweep_stale`): only those whose owning process is
  gone, never a folder of another running window.
`is_temporary(path)` tells paths in such folders apart, so they never enter Open Recent.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "pt2v-"
_NAME = re.compile(r"^pt2v-(\d+)-[A-Za-z0-9_.-]+$")


def root() -> Path:
    return Path(tempfile.gettempdir())


def new_dir(kind: str) -> Path:
    """A fresh folder owned by this process; `kind` (decompose, run, script stem...) says what it is for."""
    safe = re.sub(r"[^A-Za-z0-9_.]+", "_", kind)[:40] or "job"
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{safe}-", dir=root()))


def remove(path: str | os.PathLike[str] | None) -> None:
    """Remove a folder made by `new_dir` (anything else is left alone)."""
    if path is not None and owner_pid(Path(path)) is not None:
        shutil.rmtree(path, ignore_errors=True)


def owner_pid(path: Path) -> int | None:
    """The pid in the name of an app temp folder directly under `root()`, else None."""
    m = _NAME.match(path.name)
    return int(m.group(1)) if m and path.parent == root() else None


def is_temporary(path: str | os.PathLike[str]) -> bool:
    """True for a path inside one of the app's temporary folders (of any process)."""
    p = Path(os.path.abspath(path))
    return any(owner_pid(parent) is not None for parent in (p, *p.parents))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def own_dirs() -> list[Path]:
    return [p for p in _app_dirs() if owner_pid(p) == os.getpid()]


def remove_own() -> None:
    """Remove every folder this process made (the app is closing)."""
    for p in own_dirs():
        shutil.rmtree(p, ignore_errors=True)


def sweep_stale() -> list[Path]:
    """Remove the folders of app processes that are gone (crashed); returns what was removed."""
    stale = [p for p in _app_dirs() if (pid := owner_pid(p)) is not None and pid != os.getpid() and not _alive(pid)]
    for p in stale:
        shutil.rmtree(p, ignore_errors=True)
    return stale


def _app_dirs() -> list[Path]:
    base = root()
    try:
        with os.scandir(base) as entries:  # a shared temp folder may hold thousands of entries: names first
            return [base / e.name for e in entries if e.name.startswith(PREFIX) and _NAME.match(e.name)
                    and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


atexit.register(remove_own)
