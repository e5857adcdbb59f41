"""The one error a user sees when a `.pte` cannot be read (core/pt2/reader.py turns it into an `ArchiveError`).

This package sits below `core/pt2` (the `.pt2` reader dispatches to it by magic), so it has its own error type;
`str(error)` is meant for the user, as `ArchiveError`'s is.
"""
from __future__ import annotations


class PteError(Exception):
    """A `.pte` could not be read: damaged, truncated, hostile, or written by a newer ExecuTorch."""
