"""Worker job `trace_script`: run a user's script under torch.compile's structured log (`TORCH_TRACE`), so that
every compile, graph break and recompile it makes can be read back by core/trace (issue 40 §5; docs/trace.md).

The script runs as the export job runs it (core/export/job.py `run_script`: as `__main__`, its folder on sys.path),
with nothing of torch patched. What torch reads as it is first imported is set before the script imports it, in
this fresh worker (the kind is `Warm.NEVER`: a warm worker has imported torch already):
- `TORCH_TRACE=OUT/trace`: torch writes one `dedicated_log_torch_trace_*.log` per process there;
- `INDUCTOR_PROVENANCE=1` (`torch._inductor.config.trace.provenance_tracking_level`): Inductor records which
  kernel came from which node, which a trace the user brings rarely holds;
- `TORCHINDUCTOR_FX_GRAPH_CACHE=0`, `TORCHINDUCTOR_AUTOGRAD_CACHE=0`: no FX-graph or AOTAutograd cache hit replays a
  graph an earlier run compiled (with that run's source lines), so every graph in the trace is this run's.
Child processes the script starts (Inductor's compile workers, torch.distributed's) inherit them.

A script that stops with an error is the job's failure of kind `script`, at the user's line; the logs written before
it stay in the folder and are listed.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.export.job import compile_script, run_script
from pt2_viewer.core.export.report import ScriptError
from pt2_viewer.core.jobs.kinds import TRACE_SCRIPT
from pt2_viewer.core.jobs.protocol import PROGRESS
from pt2_viewer.core.jobs.schemas.failure import Failure
from pt2_viewer.core.jobs.schemas.trace import SCRIPT_FAILED, TRACE_FOLDER, TraceRequest, TraceResult
from pt2_viewer.core.jobs.typed_job import TypedJob
from pt2_viewer.core.trace.files import LOG_GLOB

Emit = Callable[[dict[str, Any]], None]


def trace_environment(trace_dir: Path) -> dict[str, str]:
    """The variables torch reads at import that make this run's trace: where, provenance on, caches off."""
    return {"TORCH_TRACE": str(trace_dir), "INDUCTOR_PROVENANCE": "1",
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}


def script_failure(error: ScriptError) -> Failure:
    """The script's own error in one sentence, at the user's line."""
    where = f" at {Path(error.line.file).name}:{error.line.line}" if error.line else ""
    first = (error.message.strip().splitlines() or [""])[0]
    return Failure(SCRIPT_FAILED, f"The script stopped{where} with {error.type}: {first}".rstrip(": "),
                   "Fix the script and run it again; the trace written before it stopped is kept.", error.traceback)


def run(request: TraceRequest, out: Path, emit: Emit) -> TraceResult:
    if not request.script:
        raise ValueError("the request needs 'script': the path of a Python script")
    script = Path(request.script).expanduser().resolve()
    if not script.is_file():
        raise ValueError(f"the script {script} does not exist or is not a file")
    if "torch" in sys.modules:  # the switches below are read once, at import: a worker that has torch cannot trace
        raise RuntimeError("torch was imported before the trace job started; it runs only in a fresh worker")
    trace_dir = out / TRACE_FOLDER
    trace_dir.mkdir(parents=True, exist_ok=True)
    os.environ.update(trace_environment(trace_dir))
    code, error = compile_script(script)
    if code is not None:
        emit({"type": PROGRESS, "stage": "script", "message": f"Running {script.name} under TORCH_TRACE"})
        _ns, error = run_script(script, code, None)
    logs = sorted(p.name for p in trace_dir.glob(LOG_GLOB))
    torch = sys.modules.get("torch")
    result = TraceResult(ok=error is None, trace=TRACE_FOLDER, logs=logs,
                         torch_version=getattr(torch, "__version__", None))
    if error is not None:
        result.error = script_failure(error)
    return result


run_job = TypedJob(run, TRACE_SCRIPT)  # the worker's entry: the `trace_script` job of core/jobs/kinds.py
