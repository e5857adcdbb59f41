"""The `run_pte` job: run an ExecuTorch `.pte` with ExecuTorch's own runtime (`executorch.runtime`), on the user's
Python, and report as the run job does (outputs' summaries, latency).

Its inputs come from the source program when one is named (`source`: its saved sample, or inputs generated from
its signature, as Run makes them), else they are made from the method's own input metadata (core/pte: dtype and
shape; a non-tensor input gets the value the file holds). Without executorch installed it says which to install.

With `node_times`, the method runs again with ETDump on: each instruction's and delegate call's time, keyed by the
`.pte` graph's node names, and with `source` by the source's nodes too (core/deploy/node_times.py), mapped through
`etrecord`, the ETRecord beside the file, or a fresh lowering of the source whose instructions equal the file's.
With `etdump` (a recording from a device) nothing runs: the same times are read from it.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.etdump_import import recorded_run
from pt2_viewer.core.deploy.etrecord_choice import ChosenEtrecord, Trust, choose_etrecord
from pt2_viewer.core.deploy.node_times import imported_node_times, pte_node_times
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.kinds import RUN_PTE
from pt2_viewer.core.jobs.loading import load_program, trust_options
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.jobs.typed_job import TypedJob, reporting
from pt2_viewer.core.pte.errors import PteError
from pt2_viewer.core.pte.reader import read_pte
from pt2_viewer.core.pte.schema import SCHEMA_SOURCE
from pt2_viewer.core.run.artifact_run import Emit, device_cpu, input_report, path_of, source_inputs, timed_run
from pt2_viewer.core.run.job import cuda_status, progress
from pt2_viewer.core.run.runtime_log import runtime_log

MISSING_HINT = ("Lower the model again with a partitioner whose backend takes the operator (XNNPACK's "
                "XnnpackPartitioner takes most convolution, linear and elementwise ops), or run it on an ExecuTorch "
                "runtime built with a kernel library that registers it (a custom-ops library).")
INSTALL_HINT = ("pip install executorch (a release that reads this file's schema: the viewer reads "
                f"{SCHEMA_SOURCE}, and was tested with executorch 1.5.1)")


def run(request: ArtifactRunRequest, out: Path, emit: Emit) -> RunResult:
    cuda_ok, why = cuda_status()
    return reporting(_run, request, out, emit, RunResult(ok=False, cuda_available=cuda_ok,
                                                         cuda_unavailable_reason=why))


run_job = TypedJob(run, RUN_PTE)  # the worker's entry: the `run_pte` job of core/jobs/kinds.py


def runtime() -> Any:
    """ExecuTorch's runtime, or a failure saying how to get it."""
    try:
        from executorch.runtime import Runtime
    except ImportError as e:
        raise JobFailure("missing_module", f"Running a .pte needs ExecuTorch's runtime, which this Python does not "
                         f"have ({first_line(e)}).", INSTALL_HINT) from None
    return Runtime.get()


def made_inputs(path: Path, method: str, seed: int) -> list[Any]:
    """Inputs made from the method's own metadata: random tensors of its dtypes and shapes."""
    import torch

    try:
        archive = read_pte(path)
    except PteError as e:
        raise JobFailure("load", str(e), "Lower the model again, or copy the file again.") from None
    assert archive.executorch is not None
    spec = archive.executorch.method(method)
    gen = torch.Generator().manual_seed(seed)
    flat: list[Any] = []
    for io in spec.inputs:
        if io.shape is None:
            flat.append(io.default)
            continue
        dtype = getattr(torch, io.dtype, None)
        if not isinstance(dtype, torch.dtype):
            raise JobFailure("input", f"Cannot make an input of dtype {io.dtype}.",
                             "Name the source program (--source) to run its inputs.")
        if dtype == torch.bool:
            flat.append(torch.randint(0, 2, io.shape, generator=gen).bool())
        elif dtype.is_floating_point:
            flat.append(torch.randn(io.shape, generator=gen).to(dtype))
        else:
            flat.append(torch.randint(0, 16, io.shape, generator=gen).to(dtype))
    return flat


def method_names(path: Path) -> list[str]:
    try:
        archive = read_pte(path)
    except PteError as e:
        raise JobFailure("load", str(e), "Lower the model again, or copy the file again.") from None
    return [p.name for p in archive.programs]


def load_method(path: Path, method: str, log: list[str]) -> Any:
    """The method loaded by ExecuTorch's runtime; a failure says the runtime's own reason (core/run/runtime_log.py):
    the operators it has no kernel for, or else the usual causes."""
    rt = runtime()
    with runtime_log() as said:
        try:
            program = rt.load_program(path)
            return program.load_method(method)
        except Exception as e:
            failed = e
    missing = said.missing_operators()
    if missing:
        ops = ", ".join(missing)
        raise JobFailure("load", f"ExecuTorch could not load '{path.name}' ({method}): missing operator "
                         f"{ops}: this runtime's kernels (ExecuTorch's portable kernels) have none for "
                         f"{'it' if len(missing) == 1 else 'them'}.", MISSING_HINT, "\n".join(said.lines)) from failed
    raise JobFailure("load", f"ExecuTorch could not load '{path.name}' ({method}): {first_line(failed)}",
                     "A delegate (XNNPACK...) missing from this runtime, or a newer file than the runtime, are "
                     "the usual causes; " + INSTALL_HINT, "\n".join(said.lines)) from failed


def _chosen_etrecord(path: Path, method: str, request: ArtifactRunRequest, out: Path, emit: Emit,
                     report: RunResult) -> ChosenEtrecord | None:
    """With the source named, the ETRecord mapping the file to it: the one named, the one beside the file, or a fresh
    lowering whose instructions equal the file's (core/deploy/etrecord_choice.py), else refused saying what to pass;
    for an imported ETDump, the ETRecord named alone too (its exported program is the source)."""
    if not request.source and not (request.etdump and request.etrecord):
        return None
    ep = None  # an imported ETDump with its ETRecord alone: the ETRecord's program is the source
    if request.source:
        ep = load_program(request.source, request.program_name, request.preload, **trust_options(request)).ep
    chosen = choose_etrecord(path, method, request.etrecord, ep, out / "node_times",
                             Trust(request.trust, request.allow_imports), report.log, emit)
    report.etrecord_used, report.etrecord_how = chosen.path, chosen.how
    return chosen


def _node_times(path: Path, method: str, flat: list[Any], request: ArtifactRunRequest, out: Path, emit: Emit,
                report: RunResult) -> None:
    """Each instruction's and delegate call's time from ETDump (core/deploy/node_times.py); by the source's nodes too
    when the request names the source: through the ETRecord named, the one beside the file, or a fresh lowering
    whose instructions equal the file's (core/deploy/etrecord_choice.py), else refused saying what to pass."""

    chosen = _chosen_etrecord(path, method, request, out, emit, report)
    progress(emit, "node_times", 0.8, f"Timing each instruction of {path.name} with ETDump")
    timed = RunResult.from_json({"ok": True, **pte_node_times(path, method, flat, out / "node_times",
                                                              chosen.etrecord if chosen else None)})
    report.node_times, report.hottest = timed.node_times, timed.hottest
    report.source_node_times = timed.source_node_times


def _imported(path: Path, method: str, request: ArtifactRunRequest, out: Path, emit: Emit,
              report: RunResult) -> None:
    """An ETDump recorded elsewhere, read instead of running (core/deploy/etdump_import.py): the times a local run's
    `node_times` gives, by the source's nodes through the ETRecord chosen as for a local run."""
    assert request.etdump is not None
    run = recorded_run(request.etdump, request.debug_buffer)
    chosen = _chosen_etrecord(path, method, request, out, emit, report)
    progress(emit, "node_times", 0.5, f"Reading {run.etdump.name}, recorded from {path.name}")
    imported = RunResult.from_json({"ok": True, **imported_node_times(path, method, run,
                                                                      chosen.etrecord if chosen else None)})
    report.program, report.program_name, report.etdump = str(path), method, str(run.etdump)
    for name in ("node_times", "hottest", "source_node_times", "node_time_stats", "delegate_events",
                 "delegate_events_note"):
        setattr(report, name, getattr(imported, name))
    progress(emit, "done", 1.0, "Done")


def _run(request: ArtifactRunRequest, out: Path, emit: Emit, report: RunResult) -> None:
    import torch.utils._pytree as pytree

    path = path_of(request, ".pte")
    device = device_cpu(request, "An ExecuTorch program")
    names = method_names(path)
    named = request.program_name  # the window's Run names the method it shows as the program
    method_name = request.method or (named if named in names else None) or (names[0] if names else "forward")
    if named in names:
        request = replace(request, program_name=None)  # not the source's program name
    if method_name not in names:
        raise JobFailure("request", f"'{path.name}' has no method '{method_name}'.", f"It has: {', '.join(names)}.")
    if request.etdump:
        _imported(path, method_name, request, out, emit, report)
        return
    progress(emit, "load", 0.0, f"Loading {path.name} with ExecuTorch's runtime")
    method = load_method(path, method_name, report.log)
    given = source_inputs(request, report)
    if given is not None:
        args, kwargs, source = given
        flat = pytree.tree_leaves((args, kwargs))
    else:
        flat, source = made_inputs(path, method_name, request.seed), "generated"
    report.program, report.program_name, report.device = str(path), method_name, device
    report.inputs = input_report(flat, source, request.preview)
    outputs = timed_run(lambda: method.execute(flat), request, emit, f"{path.name} ({method_name})", report)
    del outputs
    if request.node_times:
        _node_times(path, method_name, flat, request, out, emit, report)
