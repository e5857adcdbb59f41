"""The run job: run a program on CPU or CUDA, summarise its outputs, time it, and optionally compare it with
`torch.compile` and with an AOTInductor package built from it.

`run` takes the `RunRequest` and returns the `RunResult` (core/jobs/schemas/run.py, where the defaults are); in
JSON, all optional but `program`:
  program (.pt2 path), program_name, preload (a .py file to import first, e.g. a custom op's definition),
  device ("cpu" | "cuda" | "cuda:N"), inputs ("auto" | "sample" | "generated"; auto = sample when saved),
  dims ({symbol, "x.shape[0]" or an int input's name: size} for generated inputs; an unbounded dim starts from its
  traced size), seed, warmup, runs, preview (values per output),
  compile (bool: also run torch.compile(ep.module())), aoti (bool), aoti_package (where to save the package;
  default OUT/model.aoti.pt2), node_times (bool: per-node time).
The result is described in docs/jobs.md. It always carries `cuda_available`, so the GUI can disable Run on CUDA
and say why, even when the run itself failed.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.kinds import RUN_PROGRAM
from pt2_viewer.core.jobs.loading import captured_torch_logs, load_program, trust_options
from pt2_viewer.core.jobs.schemas.run import Build, Difference, Hot, RunRequest, RunResult
from pt2_viewer.core.jobs.schemas.run import Inputs as InputsReport
from pt2_viewer.core.jobs.typed_job import TypedJob, reporting
from pt2_viewer.core.run.fresh_inputs import FreshInputs, SavedBuffers, copied
from pt2_viewer.core.run.inputs import Inputs, check_inputs, generate_inputs, user_inputs
from pt2_viewer.core.run.tensor_stats import flat_outputs, max_difference, summarise
from pt2_viewer.core.run.timing import measure, node_times
from pt2_viewer.core.util.files import write_atomically

Emit = Callable[[dict[str, Any]], None]
HOTTEST = 10


def progress(emit: Emit, stage: str, fraction: float, message: str) -> None:
    emit({"type": "progress", "stage": stage, "fraction": fraction, "message": message})


def cuda_status() -> tuple[bool, str]:
    """(available, why not) for this process's torch."""
    import torch

    if torch.cuda.is_available():
        return True, ""
    if torch.version.cuda is None:
        return False, f"this torch ({torch.__version__}) is built for CPU only"
    return False, "torch was built with CUDA but finds no usable GPU (driver or CUDA_VISIBLE_DEVICES)"


def run(request: RunRequest, out: Path, emit: Emit) -> RunResult:
    cuda_ok, why = cuda_status()
    return reporting(_run, request, out, emit, RunResult(ok=False, cuda_available=cuda_ok,
                                                         cuda_unavailable_reason=why))


run_job = TypedJob(run, RUN_PROGRAM)  # the worker's entry: the `run_program` job of core/jobs/kinds.py


def _device(request: RunRequest, report: RunResult) -> str:
    device = request.device
    if device.startswith("cuda") and not report.cuda_available:
        raise JobFailure("cuda", f"CUDA was requested but is not available: {report.cuda_unavailable_reason}.",
                         "Run on CPU, or install a CUDA build of torch on a machine with an NVIDIA GPU.")
    if device != "cpu" and not device.startswith("cuda"):
        raise JobFailure("request", f"Unknown device '{device}'.", "Use cpu, cuda or cuda:N.")
    return device


class InputChoice(Protocol):
    """What a request says about the inputs to run (RunRequest, NumericsRequest)."""

    inputs: str  # "auto", "sample" or "generated"
    dims: dict[str, int] | None
    seed: int


def choose_inputs(request: InputChoice, loaded: Any) -> Inputs:
    """The program's saved sample (`auto`, `sample`; not with `dims`), else inputs generated from its signature."""
    mode = request.inputs
    if mode in ("auto", "sample") and loaded.sample_inputs is not None and not request.dims:
        args, kwargs = loaded.sample_inputs
        return Inputs(tuple(args), dict(kwargs), "sample")
    if mode == "sample":
        raise JobFailure("input", f"'{loaded.path.name}' has no sample inputs saved with the program.",
                         "Use generated inputs instead.")
    return generate_inputs(loaded.ep, request.dims, request.seed)


def _to_device(value: Any, device: str) -> Any:
    import torch
    import torch.utils._pytree as pytree

    return pytree.tree_map(lambda v: v.to(device) if isinstance(v, torch.Tensor) else v, value)


def _explain_run_error(e: BaseException, device: str) -> JobFailure:
    import torch

    if isinstance(e, torch.OutOfMemoryError):
        return JobFailure("oom", f"{device} ran out of memory running the program: {first_line(e)}",
                          "Use smaller inputs (lower the dynamic dims), free the device, or run on CPU.")
    text = str(e)
    if "Guard failed" in text or "Expected input" in text:
        return JobFailure("constraint", f"The inputs break a constraint of the program: {first_line(e)}",
                          "Change the inputs to fit the program's shapes and dtypes.")
    return JobFailure("run", f"Running the program raised {type(e).__name__}: {first_line(e)}",
                      "The log has the full traceback.", _traceback(e))


def _traceback(e: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(type(e), e, e.__traceback__))


def _guarded(device: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except JobFailure:
        raise
    except Exception as e:
        raise _explain_run_error(e, device) from e


def _run(request: RunRequest, out: Path, emit: Emit, report: RunResult) -> None:
    import torch
    import torch.utils._pytree as pytree

    if request.program is None:
        raise JobFailure("request", "The request names no program.", "Pass the .pt2 path as 'program'.")
    device = _device(request, report)
    warmup, runs, preview = request.warmup, request.runs, request.preview

    progress(emit, "load", 0.0, f"Loading {Path(request.program).name}")
    loaded = load_program(request.program, request.program_name, request.preload, **trust_options(request))
    report.log += loaded.log
    report.program, report.program_name, report.device = str(loaded.path), loaded.name, device
    report.imported, report.imports = loaded.imported, loaded.import_details

    inputs = choose_inputs(request, loaded)
    sizes = check_inputs(loaded.ep, inputs.args, inputs.kwargs)
    flat_in, _ = pytree.tree_flatten((inputs.args, inputs.kwargs))
    report.inputs = InputsReport(source=inputs.source, sizes=sizes, values=[
        summarise(u.name, v, preview) for u, v in zip(user_inputs(loaded.ep), flat_in)])
    ep = loaded.ep
    if device != "cpu":
        from torch.export.passes import move_to_device_pass

        ep = _guarded(device, lambda: move_to_device_pass(ep, device))
    args, kwargs = _to_device((inputs.args, inputs.kwargs), device)

    progress(emit, "eager", 0.1, f"Running on {device} ({warmup} warm-up, {runs} timed runs)")
    module = ep.module()
    fresh, buffers = FreshInputs(args, kwargs), SavedBuffers(ep)
    try:
        with torch.no_grad():  # the outputs shown: one call on the inputs as given, as ep.module() gives them
            outputs = _guarded(device, lambda: copied(fresh.call(module)))  # copied: it may alias a buffer
            buffers.restore()
            latency, _ = _guarded(device, lambda: measure(lambda: fresh.call(module), device, warmup, runs,
                                                          setup=fresh.refill))
        buffers.restore()
        report.outputs = [summarise(n, v, preview) for n, v in flat_outputs(outputs)]
        report.latency = latency
        _compare(request, ep, module, fresh, buffers, outputs, latency.median_s, out, emit, report)
    finally:
        buffers.restore()  # a warm worker's cached program starts its next job as it was loaded
    progress(emit, "done", 1.0, "Done")


def _compare(request: RunRequest, ep: Any, module: Any, fresh: FreshInputs, buffers: SavedBuffers, outputs: Any,
             eager_s: float, out: Path, emit: Emit, report: RunResult) -> None:
    """Per-node times, torch.compile and AOTInductor, as the request asks; each on fresh inputs and buffers."""
    import torch
    import torch.utils._pytree as pytree

    device, warmup, runs = request.device, request.warmup, request.runs
    if request.node_times:
        progress(emit, "node_times", 0.3, "Timing each node")
        flat_user, _ = pytree.tree_flatten(copied((fresh.args, fresh.kwargs)))
        with torch.no_grad():
            times = _guarded(device, lambda: node_times(ep, flat_user, device))
        buffers.restore()
        report.node_times = times
        report.hottest = [Hot(node=n, seconds=s) for n, s in list(times.items())[:HOTTEST]]

    if request.compile:
        progress(emit, "compile", 0.4, "Compiling with torch.compile (slow on CPU)")
        report.compile = _compare_compiled(module, fresh, buffers, outputs, eager_s, device, warmup, runs, report.log)

    if request.aoti:
        package = Path(request.aoti_package or out / "model.aoti.pt2")
        report.aoti = _compare_aoti(ep, package, fresh, outputs, eager_s, device, warmup, runs, emit, report.log)


def _compare_compiled(module: Any, fresh: FreshInputs, buffers: SavedBuffers, eager_out: Any, eager_s: float,
                      device: str, warmup: int, runs: int, log: list[str]) -> Build:
    import torch

    compiled = torch.compile(module)
    t = time.perf_counter()
    with torch.no_grad(), captured_torch_logs(log):
        first = _guarded(device, lambda: copied(fresh.call(compiled)))  # compiles; compared with eager's first call
        compile_s = time.perf_counter() - t
        buffers.restore()
        latency, _ = _guarded(device, lambda: measure(lambda: fresh.call(compiled), device, warmup, runs,
                                                      setup=fresh.refill))
    buffers.restore()
    return Build(compile_s=compile_s, latency=latency, speedup=eager_s / latency.median_s,
                 difference=Difference.from_json(max_difference(eager_out, first)))


def _compare_aoti(ep: Any, package: Path, fresh: FreshInputs, eager_out: Any, eager_s: float, device: str,
                  warmup: int, runs: int, emit: Emit, log: list[str]) -> Build:
    import torch

    progress(emit, "aoti_compile", 0.5, "Compiling and packaging with AOTInductor (tens of seconds)")
    t = time.perf_counter()
    try:
        with captured_torch_logs(log):
            write_atomically(package, lambda tmp: torch._inductor.aoti_compile_and_package(ep, package_path=tmp))
    except Exception as e:
        raise JobFailure("aoti", f"AOTInductor could not compile the program: {first_line(e)}",
                         "The log has the full message; eager and torch.compile results above are still valid.",
                         _traceback(e)) from e
    compile_s = time.perf_counter() - t
    progress(emit, "aoti_run", 0.85, f"Loading {package.name} and running it")
    runner = _guarded(device, lambda: torch._inductor.aoti_load_package(str(package)))
    with torch.no_grad():
        first = _guarded(device, lambda: copied(fresh.call(runner)))
        latency, _ = _guarded(device, lambda: measure(lambda: fresh.call(runner), device, warmup, runs,
                                                      setup=fresh.refill))
    return Build(package=str(package), compile_s=compile_s, latency=latency, speedup=eager_s / latency.median_s,
                 difference=Difference.from_json(max_difference(eager_out, first)))
