"""Which job runs a file: the window's Run button and the `run` command ask before they start a worker, so this reads
only what the format registry reads to recognise the file (its magic, its zip listing) and imports no job (and no
torch)."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.formats.probe import Probe
from pt2_viewer.core.formats.registry import AOTI, PTE, recognise
from pt2_viewer.core.pt2.archive import MODELS_DIR


def run_job_for(path: str | Path, compiled: bool = False) -> str:
    """Which job runs `path`: `run_pte` for an ExecuTorch program (by its magic), `run_aoti` for an AOTInductor
    package of compiled code alone (or, `compiled`, for the compiled part of a package that holds its program too),
    else `run_program` (whose job says what is wrong with a file that is none of these)."""
    probe = Probe(path)
    fmt = recognise(probe)
    if fmt is PTE:
        return "run_pte"
    if fmt is AOTI and (compiled or not any(name.startswith(MODELS_DIR) for name in probe.zip_files)):
        return "run_aoti"
    return "run_program"
