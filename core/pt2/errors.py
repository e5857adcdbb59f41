"""The one error a user sees when a `.pt2` cannot be read.

Every problem the reader finds (missing file, not a zip, truncated, malformed JSON, wrong shape, too large) becomes an
`ArchiveError` whose message says what is wrong in the user's words and what to do about it. Callers catch this one
type; anything else escaping the reader is a bug.
"""
from __future__ import annotations


class ArchiveError(Exception):
    """A `.pt2` archive could not be read. `str(error)` is meant for the user."""

    def __init__(self, message: str, *, path: str | None = None, member: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.member = member
