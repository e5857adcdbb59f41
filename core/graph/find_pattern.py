"""Why a find pattern is not a valid regex, in words for the find bar.

Search (core/graph/index.py) falls back to matching a bad regex literally; the user should still learn that the
pattern was not read as a regex, and why, where they typed it rather than in a dialog.
"""
from __future__ import annotations

import re


def regex_problem(pattern: str) -> str | None:
    """None for a valid regex, else a one-line reason (Python's, e.g. 'missing ), unterminated subpattern at
    position 4')."""
    try:
        re.compile(pattern)
    except re.error as e:
        return str(e)
    return None


def find_status(pattern: str, matches: int) -> str:
    """The status line for a search: the match count, and the regex problem if there is one."""
    noun = "match" if matches == 1 else "matches"
    problem = regex_problem(pattern)
    if problem is None:
        return f"{matches} {noun} for '{pattern}'"
    return f"Not a valid regex ({problem}): {matches} literal {noun} for '{pattern}'"
