"""core/jobs/loading.py: a trusted program whose pytree type lives in an installed module that fails to import (as
transformers' CLIP module does on a CPU build of torch without torchvision's ops) is refused with that module's own
error in the message, not only "types not registered"."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.jobs.loading import load_program
from tests import hostile_archives as hostile
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)


def test_a_module_that_fails_to_import_is_named_with_its_error(pt2_path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    payload = hostile.Payload.make(tmp_path)
    (payload.path / f"{payload.module}.py").write_text(
        'raise RuntimeError("operator torchvision::nms does not exist")\n', encoding="utf-8")
    path = hostile.build("pytree_type", pt2_path("dynamic_shapes"), tmp_path / "archives", payload)
    monkeypatch.syspath_prepend(str(payload.path))
    with pytest.raises(JobFailure) as failure:
        load_program(path, trusted=True)
    assert failure.value.failure.kind == "missing_type"
    assert (f"'{payload.module}' is installed but failed to import (RuntimeError: operator torchvision::nms does "
            "not exist)") in failure.value.failure.message
