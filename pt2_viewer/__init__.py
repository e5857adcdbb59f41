"""PT2 Viewer: look inside PyTorch `torch.export` programs.

The installed distribution has this one top-level package: `pt2_viewer.core` (all logic, no Qt) and `pt2_viewer.app`
(the Qt views). In a wheel they are folders inside this package; in the source checkout they are the repository's own
`core/` and `app/` folders beside this one, which the line below adds to the package's search path, so the same
`pt2_viewer.core...` imports work from a checkout (with or without an editable install) and from a wheel.
"""
from __future__ import annotations

from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent
if not (Path(__file__).resolve().parent / "core").is_dir() and (_CHECKOUT / "core" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))  # a source checkout: core/ and app/ beside us

__version__ = "0.1.0"
