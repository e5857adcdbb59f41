"""Whether a file is an ExecuTorch `.pte`, from its first 8 bytes: cheap, and free of the flatbuffers runtime (which
imports numpy), so that opening a `.pt2` pays nothing for the `.pte` reader. The format registry
(core/formats/registry.py) recognises a `.pte` with `pte_head`."""
from __future__ import annotations

import os

MAGIC_AT = 4  # 'ET' and two digits of schema version ('ET12') at byte 4: the flatbuffer's file identifier


def pte_head(head: bytes) -> bool:
    """Whether a file's first bytes are a `.pte`'s: `ET` and two digits at byte 4, whatever its name."""
    return len(head) >= 8 and head[MAGIC_AT:MAGIC_AT + 2] == b"ET" and head[MAGIC_AT + 2:MAGIC_AT + 4].isdigit()


def is_pte(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts as a `.pte` does (`pte_head`), whatever its name."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return pte_head(head)


def etrecord_beside(pte: str | os.PathLike[str]) -> str | None:
    """The ETRecord saved beside a `.pte` as Lower to ExecuTorch… and ExecuTorch's own examples save it
    (`NAME.etrecord`), or None: what maps the `.pte`'s instructions back to its source program's nodes."""
    path = os.path.splitext(os.fspath(pte))[0] + ".etrecord"
    return path if os.path.isfile(path) else None
