"""File descriptor 2 sent to a temporary file for a block: what C++ code and child processes write to stderr, past
Python's `sys.stderr` (ExecuTorch's runtime log, the `flatc` its ETDump reader runs), kept for the caller to pass on
or to put in a failure's detail."""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def captured_stderr(lines: list[str]) -> Iterator[list[str]]:
    """Capture descriptor 2 for the block; afterwards `lines` holds what was written there, line by line."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines[:] = sink.read().decode("utf-8", "replace").splitlines()
