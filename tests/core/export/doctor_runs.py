"""The doctor's runs for the fix tests: each failing script of tests/scripts/doctor/ (and the seed tutorial) diagnosed
in a real worker with its fixes verified, cached on disk.

A diagnose of a tiny script costs a worker start plus one verification run (about 10-20 s on this machine), so
each report is cached under `<per-user fixtures>/doctor-runs/<hash>/NAME/` (tests/fixture_root.py), the hash
covering the script, torch's version and every source file of core/export/ (editing the doctor starts a fresh
cache). The script is copied into that folder and run from there, so the diffs' file names and the report's paths
name the cache's own copy, never a checkout's file: the runs stay valid for later test runs and for every checkout
on the machine (a clean clone finds them built).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.client import run_job
from tests.fixture_root import SHARED_FIXTURE_ROOT
from tests.programs import build_lock

REPO = Path(__file__).resolve().parents[3]
SCRIPTS = REPO / "tests" / "scripts" / "doctor"
CACHE = SHARED_FIXTURE_ROOT / "doctor-runs"
ENV = {"OMP_NUM_THREADS": "1"}


def _key(text: str) -> str:
    import torch

    h = hashlib.sha256(text.encode() + torch.__version__.encode())
    for path in sorted((REPO / "core" / "export").rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def diagnosed(name: str, source: Path | None = None, beside: tuple[Path, ...] = ()) -> tuple[Path, dict]:
    """(the script's cached copy, its report.json) for tests/scripts/doctor/NAME.py (or `source`), with the user's
    other files `beside` it copied into the same folder."""
    src = source or SCRIPTS / f"{name}.py"
    text = src.read_text(encoding="utf-8")
    folder = CACHE / _key(text + "".join(p.read_text(encoding="utf-8") for p in beside)) / name
    script, report = folder / "src" / src.name, folder / "out" / "report.json"
    with build_lock(folder):  # another run (make fixtures, a second session) diagnosing it waits, then reads it
        if not report.exists():
            shutil.rmtree(folder, ignore_errors=True)
            script.parent.mkdir(parents=True)
            script.write_text(text, encoding="utf-8")
            for other in beside:
                shutil.copy(other, script.parent / other.name)
            export(script, folder / "out.tmp", diagnose=True)
            (folder / "out.tmp").rename(folder / "out")
    return script, json.loads(report.read_text(encoding="utf-8"))


def export(script: Path, out: Path, **request) -> dict:
    _, outcome = run_job("export_script", {"script": str(script), **request}, out, env=ENV, timeout_s=900)
    assert outcome.status == protocol.OK, outcome.message + (outcome.error_traceback or "")
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def patched_copy(script: Path, diffs: list[str], folder: Path) -> Path:
    """A copy of the script's folder with each diff applied by the standard `patch` tool; returns the copied script.
    Fails the test when a diff does not apply."""
    copy = folder / "copy"
    shutil.copytree(script.parent, copy)
    for diff in diffs:
        done = subprocess.run(["patch", "-p1", "--forward", "--batch", "-d", str(copy)], input=diff, text=True,
                              capture_output=True, check=False)
        assert done.returncode == 0, f"the offered diff does not apply:\n{diff}\n{done.stdout}{done.stderr}"
    return copy / script.name
