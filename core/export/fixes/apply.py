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


def apply_hunks(old: list[str], hunks: list[str]) -> list[str]:
    out: list[str] = []
    pos = 0  # index into old
    i = 0
    while i < len(hunks):
        m = _HUNK.match(hunks[i])
        if not m:
            i += 1
            continue
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        if start < pos:
            raise PatchError("the diff's hunks overlap")
        out.extend(old[pos:start])
        pos = start
        i += 1
        while i < len(hunks) and not hunks[i].startswith("@@"):
            line = hunks[i]
            tag, text = (line[:1], line[1:]) if line else (" ", "")
            if tag in (" ", "-"):
                if pos >= len(old) or old[pos] != text:
                    raise PatchError(f"line {pos + 1} is not what the fix expects (the file changed since "
                                     "Diagnose ran): diagnose again")
                pos += 1
                if tag == " ":
                    out.append(text)
            elif tag == "+":
                out.append(text)
            i += 1
    out.extend(old[pos:])
    return out


@dataclass(frozen=True)
class Written:
    """A file "Apply to file" changed, and where its original was kept."""

    path: Path
    original: Path


def apply_to_files(diff: str, base: str | os.PathLike[str]) -> list[Written]:
    """Apply the diff to the files under `base` (the script's folder), keeping each original beside it; returns the
    files changed. Nothing is written unless every file's hunks apply."""
    root = Path(base)
    new: dict[Path, bytes] = {}
    for name, hunks in split_files(diff).items():
        path = (root / name).resolve()
        if root.resolve() not in path.parents:
            raise PatchError(f"the diff names {name}, outside the script's folder")
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
    """NAME.orig, or NAME.orig2, NAME.orig3, ... if the user already has a file of that name."""
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
