"""Line edits to the user's files, and the unified diffs that show them.

A fix is a list of `Edit`s (replace lines `start..end` of a file by `new`; `end == start - 1` inserts before
`start`). Diffs are made with difflib against the file as it is on disk, with `a/NAME` / `b/NAME` headers relative to
the script's folder, so `patch -p1 -d FOLDER < fix.diff` applies them, and `apply_edits` builds the patched copies
the verifier exports.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path


class EditConflict(ValueError):
    """Two edits change the same lines: they cannot be applied together."""


@dataclass
class Edit:
    """Replace lines start..end (1-based, inclusive) of `file` with `new`; end == start - 1 inserts before start."""

    file: str
    start: int
    end: int
    new: list[str] = field(default_factory=list)


@dataclass
class Fix:
    """One candidate fix: what it does, what it narrows, the key code, and the edits that make it."""

    kind: str  # "torch_check" | "torch_cond" | "dynamic_shapes" | "strict" | "register_fake" | "rewrite"
    code: str  # the key line(s), e.g. "torch._check(a // 2 >= 5)"
    edits: list[Edit]
    title: str = ""  # what the change does, in words
    narrows: str = ""  # what the exported program will reject after it; "" when nothing


def read_lines(path: str) -> list[str] | None:
    """The file's lines without their newlines, or None when it cannot be read as UTF-8 text."""
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None


def indent_of(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def apply_edits(lines: list[str], edits: list[Edit]) -> list[str]:
    """The lines with all edits applied (edits of one file). Insertions at the same place go in order; replaced
    ranges that overlap, or an insertion inside a replaced range, raise EditConflict."""
    for e in edits:
        if not (1 <= e.start <= len(lines) + 1 and e.start - 1 <= e.end <= len(lines)):
            raise EditConflict(f"line {e.start} is outside the file")
    replaced = sorted((e for e in edits if e.end >= e.start), key=lambda e: e.start)
    for a, b in zip(replaced, replaced[1:]):
        if b.start <= a.end:
            raise EditConflict(f"two fixes change line {b.start}")
    for e in edits:
        if e.end < e.start and any(r.start < e.start <= r.end for r in replaced):
            raise EditConflict(f"a fix inserts inside lines another one changes ({e.start})")
    out = list(lines)
    # bottom up, so earlier line numbers stay valid; at one line, the replacement first, then insertions before it
    for _, e in sorted(enumerate(edits), key=lambda ie: (ie[1].start, ie[1].end >= ie[1].start, ie[0]), reverse=True):
        out[e.start - 1:e.end] = e.new
    return out


def by_file(edits: list[Edit]) -> dict[str, list[Edit]]:
    files: dict[str, list[Edit]] = {}
    for e in edits:
        files.setdefault(os.path.realpath(e.file), []).append(e)
    return files


def patched_texts(edits: list[Edit]) -> dict[str, str]:
    """File -> its new text with the edits applied. Raises EditConflict (or OSError when a file is unreadable)."""
    out: dict[str, str] = {}
    unique: dict[tuple[str, int, int, tuple[str, ...]], Edit] = {}
    for e in edits:  # two calls of one model get the same fix: it is made once
        unique.setdefault((os.path.realpath(e.file), e.start, e.end, tuple(e.new)), e)
    for path, file_edits in by_file(list(unique.values())).items():
        lines = read_lines(path)
        if lines is None:
            raise OSError(f"cannot read {path}")
        ends = Path(path).read_text(encoding="utf-8").endswith("\n")
        out[path] = "\n".join(apply_edits(lines, file_edits)) + ("\n" if ends else "")
    return out


def unified_diff(edits: list[Edit], base: str) -> str:
    """The edits as one unified diff, file names relative to `base` (the script's folder); "" when they conflict."""
    parts: list[str] = []
    try:
        new_texts = patched_texts(edits)
    except (EditConflict, OSError):
        return ""
    for path, new_text in new_texts.items():
        old = Path(path).read_text(encoding="utf-8")
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        parts.append("".join(difflib.unified_diff(old.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                                  f"a/{rel}", f"b/{rel}", n=2)))
    return "".join(parts)
