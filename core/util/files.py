"""Write job outputs atomically: into a private temp folder beside the target, under the target's own name, then
`os.replace`.

A cancelled or crashed job must never leave a half-written `.pt2` that the viewer would then try to open. The file
keeps its final name while written because `torch.export.save` names the archive's root folder after the file.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Callable


def write_atomically(path: str | os.PathLike[str], write: Callable[[str], Any]) -> Path:
    """Call `write(tmp_path)` for a temp path with `path`'s name in `path`'s folder, then move it onto `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.") as tmp_dir:
        tmp = Path(tmp_dir) / path.name
        write(str(tmp))
        os.replace(tmp, path)
    return path


def save_program(ep: Any, path: str | Path) -> Path:
    """`torch.export.save` into `path`, atomically."""
    import torch

    return write_atomically(path, lambda tmp: torch.export.save(ep, tmp))
