"""How a find pattern is read, and in words for the find bar.

Find is a regex over names, ops, modules and types (core/graph/index.py's `search`). Two patterns are searched as
written rather than as a regex:
- one that is not a regex (`soft(max`): the user should learn that it was searched literally, and why, where they
  typed it rather than in a dialog, and without an error colour: literal matches are an answer, not a failure;
- one that looks like a type or a shape (`f32[2, 16, 4, 16]`, copied from a node): as a regex its brackets are a
  character class that matches nothing the user meant. It is searched literally first, as a regex only when nothing
  matches it as written.
"""
from __future__ import annotations

import re

import msgspec

from pt2_viewer.core.graph.index import GraphIndex, SearchHit

# a dtype's short name (f32, bf16, i64, b8, c64, u8) or nothing, then a bracket: `f32[`, `[2, 16]`, `i64[]`
_TYPE_LIKE = re.compile(r"(?:^|[\s,(])(?:[a-z]{1,4}\d{0,3})?\[[^\]]*(?:\]|$)", re.IGNORECASE)


def regex_problem(pattern: str) -> str | None:
    """None for a valid regex, else a one-line reason (Python's, e.g. 'missing ), unterminated subpattern at
    position 4')."""
    try:
        re.compile(pattern)
    except re.error as e:
        return str(e)
    return None


def looks_like_type(pattern: str) -> bool:
    """Whether a pattern reads as a tensor type or shape (`f32[2, 16, 4, 16]`, `[s27, 3]`, `i64[]`)."""
    return _TYPE_LIKE.search(pattern) is not None


class Reading(msgspec.Struct, frozen=True):
    """How a pattern was searched: `literal` as written (else as a regex); `problem`, why it is not a regex."""

    pattern: str
    literal: bool = False
    problem: str | None = None

    @property
    def as_type(self) -> bool:
        """Searched as written because it looks like a type or shape (a valid regex too)."""
        return self.literal and self.problem is None


def search(index: GraphIndex, pattern: str) -> tuple[list[SearchHit], Reading]:
    """Find's matches for `pattern`, and how it was read: a type or shape as written first (then as a regex if
    nothing matches so), a pattern that is no regex as written, anything else as a regex."""
    if not pattern:
        return [], Reading(pattern)
    problem = regex_problem(pattern)
    if problem is not None:
        return index.search(re.escape(pattern)), Reading(pattern, True, problem)
    if looks_like_type(pattern):
        hits = index.search(re.escape(pattern))
        if hits:
            return hits, Reading(pattern, True)
    return index.search(pattern), Reading(pattern)


def find_status(reading: Reading, matches: int) -> str:
    """The status line for a search: the match count, and, for a pattern searched as written, that it was, and why
    (no error: the literal matches are the answer)."""
    noun = "match" if matches == 1 else "matches"
    head = f"{matches} {noun} for '{reading.pattern}'"
    if reading.problem is not None:
        return f"{head}, searched literally (as a regex: {reading.problem})"
    if reading.as_type:
        return f"{head}, searched as written (it looks like a type or shape)"
    return head


def find_label(reading: Reading) -> str:
    """What the step bar calls Find's matches: "'conv'", or "'x(' (literally)" when the pattern was searched as
    written."""
    return f"'{reading.pattern}'" + (" (literally)" if reading.literal else "")


def find_tip(reading: Reading) -> str:
    """The find bar's tooltip: how the pattern was read."""
    if reading.problem is not None:
        return f"Searched literally: '{reading.pattern}' is not a regex ({reading.problem})"
    if reading.as_type:
        return (f"Searched as written: '{reading.pattern}' looks like a type or shape (searched as a regex only "
                "when nothing matches it as written)")
    return "A regex over names, ops, modules, shapes and dtypes (Enter or F3: next match)"
