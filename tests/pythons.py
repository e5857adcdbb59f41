"""Real Pythons for the tests of the worker's Python: `python_without_torch`, a fresh venv with none of our packages
(no torch, no transformers), made with `python -m venv --without-pip` in a fraction of a second.

Use `from tests.pythons import python_without_torch` in a test module for the fixture.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def python_without_torch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("no-torch") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    return where / "bin" / "python"
