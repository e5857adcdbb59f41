"""Counts in words: "1 group", "2 groups". Every count the app shows goes through `plural`, so none reads
"1 groups" or "call(s)"."""
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
