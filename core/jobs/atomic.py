"""Write job outputs atomically: into a temp file beside the target, then `os.replace`.

A cancelled or crashed job must never leave a half-written `.pt2` that the viewer would then try to open.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Callable


def write_atomically(path: str | Path, write: Callable[[str], Any]) -> Path:
    """Call `write(tmp_path)` for a temp file in `path`'s folder, then move it onto `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix or ".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save_program(ep: Any, path: str | Path) -> Path:
    """`torch.export.save` into `path`, atomically."""
    import torch

    return write_atomically(path, lambda tmp: torch.export.save(ep, tmp))
