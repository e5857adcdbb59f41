"""The requests of the jobs that run what a program became: an ExecuTorch `.pte` (`run_pte`) and an AOTInductor
package (`run_aoti`), core/run/pte_job.py and core/run/aoti_job.py. Their results are the run job's `RunResult`, so
`pt2-viewer run FILE.pte --json` prints what it prints for a `.pt2`."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.jobs.schemas.base import local_path
from pt2_viewer.core.jobs.schemas.run import RunRequest


@dataclass
class ArtifactRunRequest(RunRequest):
    KIND = "artifact run request"

    source: str | None = local_path()  # the source .pt2: its sample (or generated) inputs are the ones run
    method: str | None = None  # a .pte's method (default: its first, "forward")
    etrecord: str | None = local_path()  # a .pte's ETRecord: with `source` and `node_times`, source_node_times
    etdump: str | None = local_path()  # a .pte's ETDump recorded elsewhere: its times imported instead of running
    debug_buffer: str | None = local_path()  # the debug buffer written with `etdump` (checked, not needed for times)
