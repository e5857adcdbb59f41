"""Where the tests' fixtures are cached: `.cache/` in this checkout, or `$PT2V_TEST_CACHE`.

Per checkout, not per user: the programs record where they were exported (stack traces name this checkout's
tests/programs.py and its lines; the doctor's runs name its scripts), and the tests read those files back, so a
fixture built in another folder would point at another folder's files. Set `PT2V_TEST_CACHE` only to share one cache
between worktrees you keep identical. Every entry is keyed by torch's version and the source and lines of the code
that built it (tests/programs.py `builder_key`).

No heavy imports here: tests/conftest.py reads it before anything else, to point the layout cache at it."""
from __future__ import annotations

import os
from pathlib import Path

FIXTURE_ROOT = Path(os.environ.get("PT2V_TEST_CACHE") or Path(__file__).resolve().parent.parent / ".cache").resolve()
