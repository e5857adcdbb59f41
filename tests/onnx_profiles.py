"""ONNX Runtime's own profiles of the real `.onnx` exports of tests/onnx_programs.py, as a user records them:
`SessionOptions.enable_profiling = True`, a few runs on random inputs, `end_profiling()` writes
`onnxruntime_profile_*.json` (here under the given prefix). `optimization` is ONNX Runtime's graph optimization
level: `ORT_ENABLE_ALL` (its default, which renames and fuses nodes) or `ORT_DISABLE_ALL` (the model's nodes as the
file holds them). A run takes about a second, so nothing is cached; callers keep the file for their session.
`exported` gives the model, `kernel_times` reads the profile with the json module alone: the truth the importer's
per-node sums are checked against."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.programs import ExportFailed


def exported(name: str) -> Path:
    """The `.onnx` of one test model (tests/onnx_programs.py); the test is skipped, naming why, where torch's dynamo
    exporter (onnxscript) is missing or refuses it."""
    pytest.importorskip("onnxscript", reason="torch.onnx's dynamo exporter needs onnxscript (requirements-dev.txt)")
    from tests.onnx_programs import onnx_path

    try:
        return onnx_path(name)
    except ExportFailed as e:
        pytest.skip(f"{name} could not be exported to ONNX: {e}")


def ort_profile(model: Path, folder: Path, optimization: str = "ORT_ENABLE_ALL", runs: int = 3) -> Path:
    """Run `model` `runs` times in ONNX Runtime on CPU with profiling on; the profile's path (in `folder`)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(folder / f"onnxruntime_profile_{model.stem}_{optimization}")
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, optimization)
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 2 for d in i.shape]  # a symbolic dim (batch, seq) runs at 2
        feeds[i.name] = (rng.standard_normal(shape).astype(np.float32) if "float" in i.type
                         else rng.integers(0, 10, shape).astype(np.int64))
    for _ in range(runs):
        session.run(None, feeds)
    return Path(session.end_profiling())


def kernel_times(profile: Path) -> dict[str, tuple[int, float]]:
    """The profile's own `NAME_kernel_time` node events: NAME -> (how many, total µs)."""
    out: dict[str, tuple[int, float]] = {}
    for e in json.loads(profile.read_text(encoding="utf-8")):
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"].removesuffix("_kernel_time")
            calls, us = out.get(name, (0, 0.0))
            out[name] = (calls + 1, us + e["dur"])
    return out
