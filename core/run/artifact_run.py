"""What the `.pte` and AOTInductor run jobs (`pte_job.py`, `aoti_job.py`) share: the inputs to run (the source
program's, or made from the file's own metadata), the outputs' summaries, the timing, and the report in the run job's
shape (`RunResult`). Which job runs a file is `dispatch.py`'s; a candidate's outputs for numerics, `candidate.py`'s."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.loading import load_program, trust_options
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.run import Inputs, RunResult
from pt2_viewer.core.run.fresh_inputs import copied
from pt2_viewer.core.run.inputs import generate_inputs
from pt2_viewer.core.run.job import progress
from pt2_viewer.core.run.tensor_stats import flat_outputs, summarise
from pt2_viewer.core.run.timing import measure

Emit = Callable[[dict[str, Any]], None]


def source_inputs(request: ArtifactRunRequest, report: RunResult, source: str | None = None
                  ) -> tuple[tuple[Any, ...], dict[str, Any], str] | None:
    """The inputs of the source program (`source`, else the request's): its saved sample, or generated from its
    signature; None when no source is named."""
    source = source or request.source
    if not source:
        return None
    loaded = load_program(source, request.program_name, request.preload, **trust_options(request))
    report.log += loaded.log
    if request.inputs in ("auto", "sample") and loaded.sample_inputs is not None:
        args, kwargs = loaded.sample_inputs
        return tuple(args), dict(kwargs), "sample"
    made = generate_inputs(loaded.ep, request.dims, request.seed)
    return made.args, made.kwargs, "generated"


def timed_run(call: Callable[[], Any], request: ArtifactRunRequest, emit: Emit, what: str, report: RunResult,
              device: str = "cpu") -> Any:
    """Run `call` with warm-up and timed runs (on CUDA, each synchronized); the outputs' summaries and the latency go
    into `report`."""
    warmup, runs = request.warmup, request.runs
    progress(emit, "run", 0.3, f"Running {what} ({warmup} warm-up, {runs} timed runs)")
    try:
        outputs = copied(call())  # the outputs shown: one call on the inputs as given (core/run/fresh_inputs.py)
        latency, _ = measure(call, device, warmup, runs)
    except JobFailure:
        raise
    except Exception as e:
        raise JobFailure("run", f"Running {what} raised {type(e).__name__}: {first_line(e)}",
                         "Check the inputs against the file's inputs (pt2-viewer info FILE).") from e
    report.outputs = [summarise(n, v, request.preview) for n, v in flat_outputs(outputs)]
    report.latency = latency
    progress(emit, "done", 1.0, "Done")
    return outputs


def input_report(flat: list[Any], source: str, preview: int) -> Inputs:
    return Inputs(source=source, values=[summarise(f"input_{i}", v, preview) for i, v in enumerate(flat)])


def device_cpu(request: ArtifactRunRequest, what: str) -> str:
    device = request.device
    if device != "cpu":
        raise JobFailure("request", f"{what} runs on CPU here; '{device}' was asked for.", "Use --device cpu.")
    return device


def path_of(request: ArtifactRunRequest, what: str) -> Path:
    if not request.program:
        raise JobFailure("request", f"The request names no {what}.", f"Pass the {what}'s path as 'program'.")
    return Path(request.program)
