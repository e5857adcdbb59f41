"""Where the tests' fixtures are cached: outside the checkout, per user (`~/.cache/pt2-viewer-tests`, or
`$PT2V_TEST_CACHE`), so a fresh clone on a machine that ran the tests before (CI's, a second worktree) finds what was
built there instead of exporting every program again. Every entry is keyed by torch's version and the source of the
code that built it (tests/programs.py `builder_key`), so a clone with other builders never takes a stale one.

No heavy imports here: tests/conftest.py reads it before anything else, to point the layout cache at it."""
from __future__ import annotations

import os
from pathlib import Path

FIXTURE_ROOT = Path(os.environ.get("PT2V_TEST_CACHE") or Path.home() / ".cache" / "pt2-viewer-tests").resolve()
