"""Counts, durations and sizes in words: "1 group", "2 groups", "1.20 ms", "32.0 MB". Every count the app shows goes
through `plural`, so none reads "1 groups" or "call(s)"; every duration through `format_seconds`, so the Run tab, its
overlay and the report agree; every size in bytes through `format_bytes`, so no view mixes MiB with MB."""
from __future__ import annotations

_IRREGULAR = {"match": "matches", "branch": "branches", "this": "these", "is": "are", "child": "children"}


def plural_of(noun: str) -> str:
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`plural(1, "group")` -> "1 group", `plural(3, "group")` -> "3 groups"; `many` for an irregular plural."""
    return f"{count:,} {noun if count == 1 else (many or plural_of(noun))}"


BYTE_UNITS = ("B", "KB", "MB", "GB", "TB")  # steps of 1024, written as `pt2-viewer info` has always written them


def format_bytes(n: float) -> str:
    """A size in the unit that reads best, in steps of 1024: "116 B", "2.0 KB", "32.0 MB", "3.0 GB". The one
    convention of the window, the report and the command lines (the Summary said "KiB" beside a legend's "MB")."""
    size = float(n)
    for unit in BYTE_UNITS:
        if abs(size) < 1024 or unit == BYTE_UNITS[-1]:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} {BYTE_UNITS[-1]}"


def format_seconds(seconds: float | None) -> str:
    """A duration in the unit that reads best: "1.20 s", "3.40 ms", "12.0 µs"; "–" when there is none."""
    if seconds is None:
        return "–"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"
