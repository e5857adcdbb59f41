"""An AOTInductor package read as text (core/pt2/aoti.py): each compiled model's device, constants, inputs and
outputs, sources and flags, in `info`'s summary; `info --json` keeps its documented shape (the `aoti` entry's
`models`, `devices`, `files`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2_viewer.core.pt2.aoti import aoti_models, read_aoti_source
from pt2_viewer.core.pt2.info import archive_info, summary_text
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import ExportFailed


def _package(with_program: bool) -> Path:
    from tests.zoo.pipeline import aoti_path

    try:
        return aoti_path(with_program)
    except ExportFailed as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("with_program", [False, True])
def test_each_compiled_model_is_described(with_program: bool) -> None:
    archive = read_archive(_package(with_program))
    (model,) = aoti_models(archive)
    assert model.name == "model" and model.device == "cpu"
    assert [(c.fqn, c.dtype, c.shape, c.nbytes, c.kind) for c in model.constants] == [
        ("linear.weight", "float32", (4, 8), 128, "Parameter")]
    assert len(model.inputs) == 1 and len(model.outputs) == 1
    roles = {f.role for f in model.files}
    assert {"wrapper", "kernel", "library", "metadata"} <= roles
    assert all(f.role != "library" for f in model.sources)  # the compiled code is never offered as text
    wrapper = next(f for f in model.sources if f.role == "wrapper")
    assert "constants_info_" in read_aoti_source(archive, wrapper.entry)
    assert model.compile_flags
    text = summary_text(archive)
    assert "model: cpu" in text and "1 constant(s) (128 B)" in text
    info = archive_info(archive)
    assert list(info) == ["torch_version", "schema_version", "programs", "aoti"]
    assert info["aoti"] == {"models": ["model"], "devices": ["cpu"], "files": len(archive.aoti.files)}  # type: ignore[union-attr]
    assert len(info["programs"]) == (1 if with_program else 0)
