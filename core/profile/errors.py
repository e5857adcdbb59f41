"""The one error a user sees when a profile cannot be used: its message is one line, naming the problem and what
to do (the `profile` command prints it and exits 1)."""
from __future__ import annotations


class ProfileError(Exception):
    """A trace could not be read, or does not belong to the program. `str(error)` is meant for the user."""
