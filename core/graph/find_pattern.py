"""How a find pattern was read, in words for the find bar.

Search (core/graph/index.py) falls back to matching a bad regex literally; the user should learn that the pattern
was searched literally, and why, where they typed it rather than in a dialog, and without an error colour: literal
matches are an answer, not a failure.
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
    """The status line for a search: the match count, and, for a pattern that is not a regex, that it was searched
    literally and why (no error: the literal matches are the answer)."""
    noun = "match" if matches == 1 else "matches"
    problem = regex_problem(pattern)
    if problem is None:
        return f"{matches} {noun} for '{pattern}'"
    return f"{matches} {noun} for '{pattern}', searched literally (as a regex: {problem})"


def find_label(pattern: str) -> str:
    """What the step bar calls Find's matches: "'conv'", or "'x(' (literally)" when the pattern is not a regex."""
    return f"'{pattern}'" + (" (literally)" if regex_problem(pattern) is not None else "")


def find_tip(pattern: str) -> str:
    """The find bar's tooltip: how the pattern was read."""
    problem = regex_problem(pattern) if pattern else None
    if problem is None:
        return "A regex over names, ops, modules, shapes and dtypes (Enter: next match)"
    return f"Searched literally: '{pattern}' is not a regex ({problem})"
