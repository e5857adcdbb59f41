"""torch's own output said once: while an export runs, a block of lines printed to stderr twice in a row is printed
once.

A strict export that meets a data-dependent branch prints the partial FX graph it traced to stderr from each of two
nested wrappers in torch.export (`_trace.py`, `print(e.partial_fx_graph, file=sys.stderr)`), so a user running the
script saw the same graph dump twice before the summary.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class _OnceStream:
    """A text stream that passes writes on, except a multi-line block equal to the last one (and print's newline
    after it)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._last_block: str | None = None
        self._skip_newline = False

    def write(self, text: str) -> int:
        if self._skip_newline and text == "\n":
            self._skip_newline = False
            return len(text)
        self._skip_newline = False
        if "\n" in text.strip():
            if text == self._last_block:
                self._skip_newline = True
                return len(text)
            self._last_block = text
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def stderr_blocks_once() -> Iterator[None]:
    """While the block runs, a block of lines written to sys.stderr right after the same block is dropped."""
    saved = sys.stderr
    sys.stderr = _OnceStream(saved)
    try:
        yield
    finally:
        sys.stderr = saved
