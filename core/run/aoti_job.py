"""The `run_aoti` job: run an AOTInductor package with `torch._inductor.aoti_load_package`, only after the user
allowed native code (`--allow-native`, or the window's question: loading the library runs it), and report as the
run job does.

Inputs come from the source program when one is named (`source`), else from the package's own ExportedProgram when
it holds one (`package_pt2` with both); a package of compiled code alone says to name its source.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.archive_check import ArchiveCheck
from pt2_viewer.core.jobs.errors import JobFailure, first_line, report_failures
from pt2_viewer.core.jobs.loading import require_native, trust_options
from pt2_viewer.core.pt2.archive import AOTI_DIR, open_archive
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.run.job import cuda_status, progress
from pt2_viewer.core.run.pipeline import Emit, device_cpu, input_report, path_of, source_inputs, timed_run


def run_job(request: dict[str, Any], out: Path, emit: Emit) -> dict[str, Any]:
    cuda_ok, why = cuda_status()
    report: dict[str, Any] = {"cuda_available": cuda_ok, "cuda_unavailable_reason": why, "log": []}
    return report_failures(_run, request, out, emit, report)


def load_package(path: Path, request: dict[str, Any], model: str | None = None) -> Any:
    """The package's runner, after the native-code consent; a failure that says what is missing otherwise."""
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
    try:
        return torch._inductor.aoti_load_package(str(path), **({"model_name": model} if model else {}))
    except Exception as e:
        raise JobFailure("load", f"torch could not load the AOTInductor package '{path.name}': {first_line(e)}",
                         "A package is tied to the torch version and the machine (CPU ISA, CUDA) that built it.") from e


def package_inputs(request: dict[str, Any], report: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], str]:
    given = source_inputs(request, report)
    if given is not None:
        return given
    from pt2_viewer.core.pt2.reader import read_archive

    try:
        has_program = bool(read_archive(str(request["program"])).programs)
    except ArchiveError as e:
        raise JobFailure("load", str(e), "Copy or build the package again.") from None
    if not has_program:
        raise JobFailure("input", "This AOTInductor package holds compiled code only: no program to make its inputs "
                         "from.", "Name the program it was built from: --source SOURCE.pt2.")
    inner = dict(request, source=request["program"])
    made = source_inputs(inner, report)
    assert made is not None
    return made


def _run(request: dict[str, Any], out: Path, emit: Emit, report: dict[str, Any]) -> dict[str, Any]:
    import torch
    import torch.utils._pytree as pytree

    path = path_of(request, "AOTInductor package")
    device = device_cpu(request, "An AOTInductor package")
    args, kwargs, source = package_inputs(request, report)
    progress(emit, "load", 0.1, f"Loading the compiled code of {path.name}")
    runner = load_package(path, request)
    report.update(program=str(path), program_name="model", device=device,
                  inputs=input_report(pytree.tree_leaves((args, kwargs)), source, int(request.get("preview", 8))))
    with torch.no_grad():
        timed_run(lambda: runner(*args, **kwargs), request, emit, f"{path.name}", report)
    return {"ok": True, **report}
