"""The `lower` job: lower a `.pt2` program to an ExecuTorch `.pte` (portable kernels, or XNNPACK where it can) with
ExecuTorch's own `to_edge_transform_and_lower(..., generate_etrecord=True)`, write the `.pte` and its ETRecord, and
say for every call_function node of the source whether it was delegated and, when not, the partitioner's reason
(core/deploy/why.py records each support check as the partitioner makes it).

Request: `program`, `program_name`, `preload`, the trust fields, `to` ("portable" | "xnnpack"), `output` (the `.pte`;
default OUT/lowered.pte; the ETRecord is written beside it with the suffix `.etrecord`). Both files are written
atomically. Result: core/jobs/schemas/lower.py.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pt2_viewer.core.deploy.handle_map import EtrecordError, etrecord_source_to_pte
from pt2_viewer.core.deploy.provenance import call_nodes, source_index, target_text
from pt2_viewer.core.deploy.pte_map import pte_program
from pt2_viewer.core.deploy.why import SupportRecorder, Verdict, verdicts
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.kinds import LOWER
from pt2_viewer.core.jobs.loading import LoadedProgram, captured_torch_logs, load_program, trust_options
from pt2_viewer.core.jobs.schemas.lower import BACKENDS, LowerRequest, LowerResult, NotDelegated
from pt2_viewer.core.jobs.schemas.onnx_lower import OnnxLowerRequest, OnnxLowerResult
from pt2_viewer.core.jobs.typed_job import TypedJob, reporting
from pt2_viewer.core.util.files import write_atomically

Emit = Callable[[dict[str, Any]], None]
INSTALL_HINT = "pip install executorch (the viewer was tested with executorch 1.5.1)"


def progress(emit: Emit, stage: str, fraction: float, message: str) -> None:
    emit({"type": "progress", "stage": stage, "fraction": fraction, "message": message})


def load_source(request: LowerRequest | OnnxLowerRequest, emit: Emit, report: LowerResult | OnnxLowerResult,
                seconds: dict[str, float]) -> LoadedProgram:
    """How every lowering starts: the request's program loaded in the worker, its log, name and imports put in the
    report and its time in `seconds["load"]` (lower to ExecuTorch here, to ONNX in core/deploy/onnx_lower.py)."""
    assert request.program, "the job checks its request names a program first"
    t = time.perf_counter()
    progress(emit, "load", 0.0, f"Loading {Path(request.program).name}")
    loaded = load_program(request.program, request.program_name, request.preload, **trust_options(request))
    report.log += loaded.log
    report.program, report.program_name = str(loaded.path), loaded.name
    report.imported, report.imports = loaded.imported, loaded.import_details
    seconds["load"] = time.perf_counter() - t
    return loaded


def run(request: LowerRequest, out: Path, emit: Emit) -> LowerResult:
    return reporting(_run, request, out, emit, LowerResult(ok=False), finished_only=("seconds",))


run_job = TypedJob(run, LOWER)  # the worker's entry: the `lower` job of core/jobs/kinds.py


def etrecord_path_for(pte: str | Path) -> Path:
    return Path(pte).with_suffix(".etrecord")


@dataclass
class Lowered:
    """What lowering gave: the ExecuTorch program (`buffer`), its ETRecord, and each source node's verdict."""

    program: Any  # ExecutorchProgramManager
    etrecord: Any  # executorch.devtools.etrecord.ETRecord
    verdicts: list[Verdict]
    recorder: SupportRecorder | None


def lower(ep: Any, backend: str, log: list[str]) -> Lowered:
    """Lower `ep` with ExecuTorch, keeping the ETRecord and recording the partitioner's checks."""
    if backend not in BACKENDS:
        raise JobFailure("request", f"Unknown backend '{backend}'.", f"Choose one of {', '.join(BACKENDS)}.")
    try:
        from executorch.exir import to_edge_transform_and_lower
    except ImportError as e:
        raise JobFailure("missing_module", f"Lowering needs ExecuTorch, which this Python does not have "
                         f"({first_line(e)}).", INSTALL_HINT) from None
    source = [(n.name, target_text(n.target)) for n in call_nodes(ep.graph)]
    recorder = None
    partitioners: list[Any] = []
    if backend == "xnnpack":
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        partitioner = XnnpackPartitioner()
        recorder = SupportRecorder(partitioner, source_index(ep))
        recorder.install()
        partitioners = [partitioner]
    try:
        with captured_torch_logs(log):
            if recorder is not None:
                with recorder.logs():
                    edge = to_edge_transform_and_lower(ep, partitioner=partitioners, generate_etrecord=True)
            else:
                edge = to_edge_transform_and_lower(ep, partitioner=partitioners, generate_etrecord=True)
            program = edge.to_executorch()
    except JobFailure:
        raise
    except Exception as e:  # ExecuTorch's lowering errors have no common base class
        import traceback

        raise JobFailure("lower", f"ExecuTorch could not lower the program to {backend}: {type(e).__name__}: "
                         f"{first_line(e)}", "The log has ExecuTorch's full message.", traceback.format_exc()) from e
    return Lowered(program, program.get_etrecord(), verdicts(source, recorder), recorder)


def _source_to_pte(etrecord: Path, pte: Path) -> dict[str, list[str]]:
    """The window's link between the source and the `.pte`: the one map of core/deploy/handle_map.py, read from the
    ETRecord as written."""
    try:
        return etrecord_source_to_pte(etrecord, pte_program(pte, None))
    except EtrecordError as e:
        raise JobFailure("lower", f"The ETRecord just written cannot be read back: {e}",
                         "The log has ExecuTorch's messages; lower the program again.") from None


def _run(request: LowerRequest, out: Path, emit: Emit, report: LowerResult) -> None:
    if not request.program:
        raise JobFailure("request", "The request names no program.", "Pass the .pt2 path as 'program'.")
    backend = request.to or "xnnpack"
    if backend not in BACKENDS:
        raise JobFailure("request", f"Unknown backend '{backend}'.", f"Choose one of {', '.join(BACKENDS)}.")
    seconds: dict[str, float] = {}
    loaded = load_source(request, emit, report, seconds)
    t = time.perf_counter()
    progress(emit, "lower", 0.1, f"Lowering to {backend} with ExecuTorch (tens of seconds)")
    lowered = lower(loaded.ep, backend, report.log)
    seconds["lower"] = time.perf_counter() - t
    t = time.perf_counter()
    progress(emit, "save", 0.9, "Writing the .pte and its ETRecord")
    pte = Path(request.output or out / "lowered.pte")
    etrecord = etrecord_path_for(pte)
    write_atomically(etrecord, lambda tmp: lowered.etrecord.save(tmp))
    write_atomically(pte, bytes(lowered.program.buffer))
    seconds["save"] = time.perf_counter() - t
    report.source_to_pte = _source_to_pte(etrecord, pte)
    delegated = [v.node for v in lowered.verdicts if v.delegated]
    progress(emit, "done", 1.0, f"{len(delegated)} of {len(lowered.verdicts)} ops delegated")
    report.pte, report.etrecord, report.backend, report.delegated = str(pte), str(etrecord), backend, delegated
    report.not_delegated = [NotDelegated(node=v.node, target=v.target, reason=v.reason)
                            for v in lowered.verdicts if not v.delegated]
    report.checks = [c.to_json() for c in lowered.recorder.checks] if lowered.recorder else []
    report.seconds = seconds
