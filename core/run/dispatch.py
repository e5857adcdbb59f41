"""Which job runs a file: the window's Run button and the `run` command ask before they start a worker, so this reads
only the file's magic or its zip listing and imports no job (and no torch)."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.pt2.archive import AOTI_DIR, MODELS_DIR, open_archive
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pte.magic import is_pte


def run_job_for(path: str | Path, compiled: bool = False) -> str:
    """Which job runs `path`: `run_pte` for an ExecuTorch program (by its magic), `run_aoti` for an AOTInductor
    package of compiled code alone (or, `compiled`, for the compiled part of a package that holds its program too),
    else `run_program`."""
    if is_pte(path):
        return "run_pte"
    try:  # the zip's listing only (cheap: the window asks this on Run)
        files = open_archive(path)
    except ArchiveError:
        return "run_program"  # the run job says what is wrong with the file
    try:
        has_aoti, has_program = bool(files.names_under(AOTI_DIR)), bool(files.names_under(MODELS_DIR))
    finally:
        files.close()
    return "run_aoti" if has_aoti and (compiled or not has_program) else "run_program"
