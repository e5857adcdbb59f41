"""The `.pte` files of the zoo (tests/zoo/pipeline.py), built once and cached; skipped, naming the reason, when
executorch is missing or refuses a model."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.programs import ExportFailed


@pytest.fixture(scope="session")
def pte_file() -> Callable[[str, str], Path]:
    pytest.importorskip("executorch", reason="executorch builds the .pte test files (requirements-dev.txt)")
    from tests.zoo.pipeline import pte_path

    def get(model: str, kind: str) -> Path:
        try:
            return pte_path(model, kind)
        except ExportFailed as e:
            pytest.skip(f"{model} could not be lowered to {kind}: {e}")

    return get
