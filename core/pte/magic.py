"""Whether a file is an ExecuTorch `.pte`, from its first 8 bytes: cheap, and free of the flatbuffers runtime (which
imports numpy), so that opening a `.pt2` pays nothing for the `.pte` reader."""
from __future__ import annotations

import os


def is_pte(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts as a `.pte` does (`ET` and two digits at byte 4), whatever its name."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return len(head) == 8 and head[4:6] == b"ET" and head[6:8].isdigit()


def etrecord_beside(pte: str | os.PathLike[str]) -> str | None:
    """The ETRecord saved beside a `.pte` as Lower to ExecuTorch… and ExecuTorch's own examples save it
    (`NAME.etrecord`), or None: what maps the `.pte`'s instructions back to its source program's nodes."""
    path = os.path.splitext(os.fspath(pte))[0] + ".etrecord"
    return path if os.path.isfile(path) else None
