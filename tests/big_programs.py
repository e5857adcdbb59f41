"""The ~10,000-node program of tests/core/graph/test_big_program.py (bench/big_model.py's 135 layers), kept per user
with the other costly fixtures no test reads a path back from (tests/fixture_root.py), under a key naming
bench/big_model.py's source; `make fixtures` builds it (`prebuild_fixtures`)."""
from __future__ import annotations

import hashlib
from pathlib import Path

from bench.big_model import program_path
from tests.fixture_root import SHARED_FIXTURE_ROOT

BUILDER = Path(__file__).resolve().parent.parent / "bench" / "big_model.py"


def big_program(layers: int = 135) -> Path:
    key = hashlib.sha256(BUILDER.read_bytes()).hexdigest()[:12]
    return program_path(layers, cache=SHARED_FIXTURE_ROOT / "big-programs" / key)


def prebuild_fixtures() -> None:
    big_program()
