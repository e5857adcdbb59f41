"""Apply one of the doctor's verified diffs to the user's files, for the window's "Apply to file".

The diff was made against the files as they were on disk when Diagnose ran; if a file changed since, its context
lines no longer match and the file is left alone (`PatchError`, in words). The original is kept beside it as
`NAME.py.orig` (or `NAME.py.orig2`, ... when that name is taken: a file of the user's is never overwritten), so the
change can be undone (`undo`). Each file is written atomically, keeping its line endings; if one of several files
cannot be written, those already written are put back. Plain text only: no torch, no Qt.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from pt2_viewer.core.util.files import write_atomically

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """The diff does not apply to the file as it is now."""


def split_files(diff: str) -> dict[str, list[str]]:
    """b/-relative file name -> that file's hunk lines."""
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    lines = diff.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            current = None
        elif line.startswith("+++ ") and current is None:
            name = line[4:].strip()
            current = files.setdefault(name[2:] if name.startswith("b/") else name, [])
        elif current is not None:
            current.append(line)
    return files


def _parse_hunks(hunks: list[str]) -> list[tuple[int, list[str], list[str]]]:
    """Each hunk as (its start in the old file, 0-based; the old lines it expects; the new lines it writes)."""
    parsed: list[tuple[int, list[str], list[str]]] = []
    i = 0
    while i < len(hunks):
        m = _HUNK.match(hunks[i])
        i += 1
        if not m:
            continue
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        old: list[str] = []
        new: list[str] = []
        while i < len(hunks) and not hunks[i].startswith("@@"):
            line = hunks[i]
            tag, text = (line[:1], line[1:]) if line else (" ", "")
            if tag in (" ", "-"):
                old.append(text)
            if tag in (" ", "+"):
                new.append(text)
            i += 1
        parsed.append((start, old, new))
    return parsed


def apply_hunks(old: list[str], hunks: list[str]) -> list[str]:
    """The old lines with the hunks applied. A hunk whose lines moved (another fix applied first added or removed
    lines above it) is found at its nearest offset, as `patch` does; one whose lines are gone is a `PatchError`."""
    out: list[str] = []
    pos = 0  # index into old
    offset = 0  # how far the file's lines moved from the diff's numbers, as found for the hunks before
    for start, expected, new in _parse_hunks(hunks):
        at = _find_block(old, expected, start + offset, pos)
        if at is None:
            raise PatchError(f"line {start + offset + 1} is not what the fix expects (the file changed since "
                             "Diagnose ran): diagnose again")
        offset = at - start
        out.extend(old[pos:at])
        out.extend(new)
        pos = at + len(expected)
    out.extend(old[pos:])
    return out


def _find_block(lines: list[str], block: list[str], near: int, lowest: int) -> int | None:
    """Where `block` occurs in `lines` at or after `lowest`, nearest to `near`; None if nowhere."""
    n = len(block)
    found = [i for i in range(lowest, len(lines) - n + 1) if lines[i:i + n] == block]
    return min(found, key=lambda i: (abs(i - near), i)) if found else None


@dataclass(frozen=True)
class Written:
    """A file "Apply to file" changed, and where its original was kept."""

    path: Path
    original: Path


def _changed_files(diff: str, base: str | os.PathLike[str]) -> dict[Path, tuple[str, list[str]]]:
    """Each file the diff changes under `base`, resolved, with its name in the diff and its hunk lines; a name
    outside `base` is a `PatchError`."""
    root = Path(base).resolve()
    files: dict[Path, tuple[str, list[str]]] = {}
    for name, hunks in split_files(diff).items():
        path = (root / name).resolve()
        if root not in path.parents:
            raise PatchError(f"the diff names {name}, outside the script's folder")
        files[path] = (name, hunks)
    return files


def planned_backups(diff: str, base: str | os.PathLike[str]) -> list[Written]:
    """Each file the diff would change and the name its original would be kept under, as `apply_to_files` keeps it
    now (`free_orig_path`): what "Apply to file" says before it writes."""
    return [Written(path, free_orig_path(path)) for path in _changed_files(diff, base)]


def apply_to_files(diff: str, base: str | os.PathLike[str]) -> list[Written]:
    """Apply the diff to the files under `base` (the script's folder), keeping each original beside it; returns the
    files changed. Nothing is written unless every file's hunks apply."""
    new: dict[Path, bytes] = {}
    for path, (name, hunks) in _changed_files(diff, base).items():
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise PatchError(f"{name} is no longer UTF-8 text: diagnose again") from None
        eol = "\r\n" if "\r\n" in text else "\n"
        lines = apply_hunks(text.splitlines(), hunks)
        new[path] = (eol.join(lines) + (eol if text.endswith(("\n", "\r")) or not text else "")).encode("utf-8")
    if not new:
        raise PatchError("the diff changes no file")
    written: list[Written] = []
    try:
        for path, content in new.items():
            original = free_orig_path(path)
            shutil.copy2(path, original)
            written.append(Written(path, original))
            write_atomically(path, content, parents=False)
    except OSError:
        undo(written)
        raise
    return written


def orig_path(path: Path) -> Path:
    return path.with_name(path.name + ".orig")


def free_orig_path(path: Path) -> Path:
    """Where `path`'s original is kept: NAME.orig, or NAME.orig2, NAME.orig3, ... if the user already has a file of
    that name. The one place that decides it, for the confirmation's words (`planned_backups`) and the writer."""
    candidate, n = orig_path(path), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.orig{n}")
    return candidate


def undo(written: list[Written]) -> None:
    """Put each kept original back in place of the file it was copied from."""
    for w in written:
        if w.original.exists():
            os.replace(w.original, w.path)
