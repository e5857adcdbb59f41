"""Where the tests' fixtures are cached: two roots, by whether a fixture names this checkout's files.

- `FIXTURE_ROOT`, per checkout (`.cache/` here): the fixtures that record where they were made. The test programs'
  stack traces name this checkout's tests/programs.py and its lines, which Details reads back. A fixture built in
  another folder would point at another folder's files, so these are built by each checkout (`make fixtures`).
- `SHARED_FIXTURE_ROOT`, per user (`~/.cache/pt2-viewer/test-fixtures`, or under `$XDG_CACHE_HOME`): the costly
  fixtures no test reads a path back from, keyed by content alone: the zoo's programs and torch's answers about them
  (tests/zoo/cache.py), the `.pte` and AOTInductor files made from them (tests/zoo/pipeline.py), the AOTInductor
  test packages (tests/aoti_package.py), the zoo models lowered by the lower job (tests/deploy_programs.py), the
  doctor's runs (tests/core/export/doctor_runs.py: each runs a copy of its script kept beside its report, so it
  names only its own folder) and the Graphviz layouts (keyed by shape). A clean clone on a machine that ran the
  tests before finds them built; each entry's key names torch's version and the source of the code that built it,
  so a changed builder builds its own entry again.

`PT2V_TEST_CACHE=DIR` puts both under DIR (a run from nothing: an empty DIR). No heavy imports here:
tests/conftest.py reads it before anything else, to point the layout cache at it, and before it moves
`XDG_CACHE_HOME` to the tests' private home."""
from __future__ import annotations

import os
from pathlib import Path

_CHOSEN = os.environ.get("PT2V_TEST_CACHE")
FIXTURE_ROOT = Path(_CHOSEN or Path(__file__).resolve().parent.parent / ".cache").resolve()
# `PT2V_TEST_SHARED_CACHE` is set from the user's own cache folder by the first test process, before tests/conftest.py
# moves XDG_CACHE_HOME to its private home: pytest-xdist's worker processes inherit that home, and must not take it
# for the user's (they rebuilt the whole zoo there)
SHARED_FIXTURE_ROOT = Path(os.environ.get("PT2V_TEST_SHARED_CACHE") or (Path(_CHOSEN) / "shared" if _CHOSEN else Path(
    os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pt2-viewer" / "test-fixtures")).resolve()
os.environ["PT2V_TEST_SHARED_CACHE"] = str(SHARED_FIXTURE_ROOT)
