"""Atomic file writes, the one way this project writes a file that someone may read while it is written: into a
private temp folder beside the target, under the target's own name, then `os.replace`.

A cancelled or crashed job must never leave a half-written `.pt2` that the viewer would then try to open, a reader of
a result or a cache entry must never see half of it, and a failed write must leave the old file as it was. The file
keeps its final name while written because some writers need it: `torch.export.save` names the archive's root folder
after the file, and image writers pick the format from the suffix.

Files get the user's umask, as any file the user saves; `private=True` makes them readable by the user only.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

Content = str | bytes | Callable[[str], Any]


def write_atomically(path: str | os.PathLike[str], content: Content, *, private: bool = False,
                     parents: bool = True) -> Path:
    """Write `content` to `path` atomically and return `path`. `content` is the text (UTF-8) or bytes to write, or a
    function `write(tmp_path)` that writes the file itself at a temp path with `path`'s name in `path`'s folder.

    `path`'s folder is created if missing, unless `parents=False` (a file the user chose to save: a missing folder is
    their mistake to hear about, as FileNotFoundError). On any failure (including the function's own) `path` is left as
    it was, no temp file remains, and the error propagates."""
    path = Path(path)
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.") as tmp_dir:
        tmp = Path(tmp_dir) / path.name
        if isinstance(content, (str, bytes)):
            data = content.encode("utf-8") if isinstance(content, str) else content
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        else:
            content(str(tmp))
            if not tmp.exists():
                raise OSError(f"nothing was written to {path}")
            if private:
                os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    return path


def save_program(ep: Any, path: str | os.PathLike[str]) -> Path:
    """`torch.export.save` into `path`, atomically."""
    import torch

    return write_atomically(path, lambda tmp: torch.export.save(ep, tmp))
