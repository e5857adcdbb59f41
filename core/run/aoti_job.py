"""The `run_aoti` job: run an AOTInductor package with `torch._inductor.aoti_load_package`, only after the user
allowed native code (`--allow-native`, or the window's question: loading the library runs it), and report as the
run job does.

Inputs come from the source program when one is named (`source`), else from the package's own ExportedProgram when
it holds one (`package_pt2` with both), else they are generated from the wrapper's input checks (dtype, sizes, the
ranges of dynamic dims: core/pt2/aoti_inputs.py); `inputs.source` says which (`sample`, `generated` or `wrapper`)
and `inputs.note` says from where.

The device is a parameter: a package compiled for CUDA runs on `cuda` / `cuda:N` where the worker has a GPU, one
compiled for the CPU on `cpu`. With `node_times`, each kernel is timed through torch.profiler
(core/run/aoti_profile.py): `kernel_times`, and `node_times` on the program's nodes through torch's provenance.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.archive_check import ArchiveCheck
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.kinds import RUN_AOTI
from pt2_viewer.core.jobs.loading import Trusting, require_native, trust_options
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.run import Hot, KernelTime, RunResult
from pt2_viewer.core.jobs.typed_job import TypedJob, reporting
from pt2_viewer.core.pt2.aoti import AotiModel, aoti_models
from pt2_viewer.core.pt2.aoti_inputs import AotiInput, choose_sizes, shape_of
from pt2_viewer.core.pt2.archive import AOTI_DIR, open_archive
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.run.aoti_profile import kernel_times
from pt2_viewer.core.run.artifact_run import Emit, input_report, path_of, source_inputs, timed_run
from pt2_viewer.core.run.job import HOTTEST, cuda_status, progress

INT_HIGH = 10  # generated integers lie in [0, 10), as the run job makes them


def run(request: ArtifactRunRequest, out: Path, emit: Emit) -> RunResult:
    cuda_ok, why = cuda_status()
    return reporting(_run, request, out, emit, RunResult(ok=False, cuda_available=cuda_ok,
                                                         cuda_unavailable_reason=why))


run_job = TypedJob(run, RUN_AOTI)  # the worker's entry: the `run_aoti` job of core/jobs/kinds.py


def load_package(path: Path, request: Trusting, model: str | None = None, device: str = "cpu"
                 ) -> Any:
    """The package's runner on `device`, after the native-code consent; a failure that says what is missing
    otherwise."""
    import torch

    try:  # a package of compiled code alone has no program for check_archive to check: only its AOTI part counts
        files = open_archive(path)
    except ArchiveError as e:
        raise JobFailure("load", str(e), "Copy or build the package again.") from None
    try:
        models = sorted({n[len(AOTI_DIR):].split("/", 1)[0] for n in files.names_under(AOTI_DIR)})
        root = files.root
    finally:
        files.close()
    if not models:
        raise JobFailure("request", f"'{path.name}' holds no AOTInductor code.",
                         "Run it as a program: pt2-viewer run FILE.pt2.")
    require_native(ArchiveCheck(path=path, root=root, models=models, has_aoti=True),
                   trust_options(request)["allow_native"])
    index = int(device.split(":", 1)[1]) if device.startswith("cuda:") else -1
    try:
        return torch._inductor.aoti_load_package(str(path), **({"model_name": model} if model else {}),
                                                 device_index=index)
    except Exception as e:
        raise JobFailure("load", f"torch could not load the AOTInductor package '{path.name}': {first_line(e)}",
                         "A package is tied to the torch version and the machine (CPU ISA, CUDA) that built it.") from e


def package_model(path: Path) -> AotiModel | None:
    """What the package's wrapper says (read as text), for its first compiled model; None when unreadable."""

    try:
        models = aoti_models(read_archive(str(path)))
    except ArchiveError as e:
        raise JobFailure("load", str(e), "Copy or build the package again.") from None
    return models[0] if models else None


def package_device(device: str, model: AotiModel | None, report: RunResult) -> str:
    """The device asked for, checked against the one the package was compiled for and against this worker."""
    built = model.device if model is not None and model.device != "unknown" else "cpu"
    if device != "cpu" and not device.startswith("cuda"):
        raise JobFailure("request", f"Unknown device '{device}'.", "Use cpu, cuda or cuda:N.")
    if device.split(":", 1)[0] != built:
        raise JobFailure("request", f"This AOTInductor package was compiled for {built}; '{device}' was asked for.",
                         f"Use --device {built}, or build the package again for {device.split(':', 1)[0]}.")
    if device.startswith("cuda") and not report.cuda_available:
        raise JobFailure("cuda", f"The package was compiled for CUDA, which is not available: "
                         f"{report.cuda_unavailable_reason}.", "Run it on a machine with an NVIDIA GPU.")
    return device


def wrapper_inputs(model: AotiModel, request: ArtifactRunRequest, device: str
                   ) -> tuple[list[Any], dict[str, int], str]:
    """Tensors made from the wrapper's input checks: seeded normal floats, integers in [0, 10), dynamic dims the
    size asked for (`dims`) or the smallest of their range from 2."""
    import torch

    specs = model.input_specs
    if not specs and model.inputs:
        raise JobFailure("input", "This package's wrapper states no input checks to make its inputs from.",
                         "Name the program it was built from: --source SOURCE.pt2.")
    try:
        sizes = choose_sizes(specs, request.dims)
    except ValueError as e:
        raise JobFailure("input", str(e), "Change --dim to a size in the range.") from None
    gen = torch.Generator().manual_seed(request.seed)
    made = [_tensor(x, shape_of(x, sizes), gen).to(device) for x in specs]
    note = (f"generated from the input checks of {Path(model.wrapper_entry).name} (dtype, sizes, ranges of dynamic "
            f"dims): " + "; ".join(_spec_text(x, sizes) for x in specs))
    return made, sizes, note


def _tensor(x: AotiInput, shape: list[int], gen: Any) -> Any:
    import torch

    dtype = getattr(torch, x.dtype, None)
    if not isinstance(dtype, torch.dtype):
        raise JobFailure("input", f"Input {x.name} has a dtype this viewer cannot make ({x.dtype}).",
                         "Name the program the package was built from: --source SOURCE.pt2.")
    if dtype == torch.bool:
        value = torch.randint(0, 2, shape, generator=gen).bool()
    elif dtype.is_floating_point or dtype.is_complex:
        value = torch.randn(shape, generator=gen).to(dtype)
    else:
        value = torch.randint(0, INT_HIGH, shape, generator=gen).to(dtype)
    strides = x.strides
    if strides and all(s is not None for s in strides) and list(strides) != list(value.stride()) and value.numel():
        strided = torch.empty_strided(shape, [int(s) for s in strides if s is not None], dtype=dtype)
        strided.copy_(value)
        return strided
    return value


def _spec_text(x: AotiInput, sizes: dict[str, int]) -> str:
    dims = [str(d.size) if d.size is not None else
            f"{d.symbol}={sizes[d.symbol]} in [{d.low if d.low is not None else 0}, "
            f"{d.high if d.high is not None else 'inf'}]" for d in x.dims]
    return f"{x.name} {x.dtype}[{', '.join(dims)}]"


@dataclass
class PackageInputs:
    """The inputs to run, where they came from (`sample`, `generated`, `wrapper`), and for wrapper-made ones their
    dynamic dims' sizes and a note saying which checks they follow."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    source: str
    sizes: dict[str, int] = field(default_factory=dict)
    note: str | None = None


def package_inputs(request: ArtifactRunRequest, report: RunResult, path: Path, model: AotiModel | None = None,
                   device: str = "cpu") -> PackageInputs:
    """The inputs to run: the source's, the package's own program's (`path`), or made from its wrapper."""
    given = source_inputs(request, report)
    if given is not None:
        return PackageInputs(*given)

    try:
        has_program = bool(read_archive(str(path)).programs)
    except ArchiveError as e:
        raise JobFailure("load", str(e), "Copy or build the package again.") from None
    if has_program:
        made = source_inputs(request, report, source=str(path))
        assert made is not None
        return PackageInputs(*made)
    if model is None:
        raise JobFailure("input", "This package holds no compiled model to make inputs for.",
                         "Name the program it was built from: --source SOURCE.pt2.")
    flat, sizes, note = wrapper_inputs(model, request, device)
    return PackageInputs(tuple(flat), {}, "wrapper", sizes, note)


@contextlib.contextmanager
def working_dir(path: Path) -> Iterator[None]:
    """Run in `path` (the job's folder): the intermediate-value printer saves into the working directory."""
    path.mkdir(parents=True, exist_ok=True)
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _run(request: ArtifactRunRequest, out: Path, emit: Emit, report: RunResult) -> None:
    import torch
    import torch.utils._pytree as pytree

    path = path_of(request, "AOTInductor package")
    model = package_model(path)
    device = package_device(request.device, model, report)
    given = package_inputs(request, report, path, model, device)
    source = given.source
    args, kwargs = pytree.tree_map(lambda v: v.to(device) if isinstance(v, torch.Tensor) else v,
                                   (given.args, given.kwargs))
    progress(emit, "load", 0.1, f"Loading the compiled code of {path.name}")
    runner = load_package(path, request, device=device)
    inputs = input_report(pytree.tree_leaves((args, kwargs)), source, request.preview)
    inputs.sizes, inputs.note = given.sizes, given.note or None
    report.program, report.program_name, report.device, report.inputs = str(path), "model", device, inputs
    call = (lambda: runner.loader.boxed_run(list(args))) if source == "wrapper" else (lambda: runner(*args, **kwargs))
    with torch.no_grad(), working_dir(out):  # a package built to save its tensors writes them under tmp/ here
        timed_run(call, request, emit, f"{path.name}", report, device)
        if request.node_times and model is not None:
            progress(emit, "node_times", 0.9, "Timing each kernel (torch.profiler)")
            kernels, times, why = kernel_times(call, model, device)
            report.kernel_times = [KernelTime.from_json(k.to_json()) for k in kernels]
            report.node_times = times
            report.hottest = [Hot(node=n, seconds=s) for n, s in list(times.items())[:HOTTEST]]
            report.kernel_times_note = why or None
    progress(emit, "done", 1.0, "Done")
