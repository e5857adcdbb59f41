"""Counts and durations in words: "1 group", "2 groups", "1.20 ms". Every count the app shows goes through `plural`,
so none reads "1 groups" or "call(s)"; every duration through `format_seconds`, so the Run tab, its overlay and
the report agree."""
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


def format_seconds(seconds: float | None) -> str:
    """A duration in the unit that reads best: "1.20 s", "3.40 ms", "12.0 µs"; "–" when there is none."""
    if seconds is None:
        return "–"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"
