"""The numerics job's request and result (`core/numerics/job.py`; the JSON is documented in docs/numerics.md). The
result is also what `pt2-viewer numerics --json` prints (without `log`) and what the Numerics panel shows.

JSON has no NaN or infinity: the job writes those numbers as strings ("nan", "inf", "-inf"), hence `Number`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.jobs.schemas.base import Number, Schema, items, local_path, optional
from pt2_viewer.core.jobs.schemas.failure import JobResult
from pt2_viewer.core.jobs.schemas.run import ProgramRequest


@dataclass
class NumericsRequest(ProgramRequest):
    KIND = "numerics request"
    VERSIONED = True

    # "core", "functional", a table .py, "bf16", "fp16", "cuda", "compile", "aoti", "onnx", or a FILE.pte,
    # AOTInductor FILE.pt2 or FILE.onnx: a local path when a file
    candidate: str = local_path(default="core")
    script: str | None = local_path()  # a model script instead of a .pt2: its eager model is the reference
    table_name: str | None = None
    inputs: str = "auto"
    dims: dict[str, int] | None = None
    seed: int = 0
    threshold: float = 1e-2  # on the relative error
    budget_mb: float = 1024  # reference values held in memory before spilling to disk
    top: int = 20  # worst nodes listed
    save_candidate: bool = False  # write a decomposed candidate and its node mapping into OUT for the compare view
    etrecord: str | None = local_path()  # a FILE.pte candidate's ETRecord (without: the source is lowered again)
    etdump: str | None = local_path()  # a FILE.pte candidate's recorded ETDump: its values, instead of running it
    debug_buffer: str | None = local_path()  # the debug buffer written with `etdump` (the values themselves)
    method: str | None = None  # a FILE.pte's method (default: its first)


@dataclass
class NodeErrorRecord(Schema):
    """One compared node (or output, or module of a script)."""

    KIND = "node error"

    node: str
    candidate: str  # its counterpart in the candidate
    max_abs: Number
    max_rel: Number
    cosine: Number
    sqnr_db: Number
    nan: int = 0
    inf: int = 0
    ref_nan: int = 0
    ref_inf: int = 0
    numel: int = 0
    note: str = ""
    error: Number = 0.0  # what the threshold is applied to
    # a FILE.pte candidate (core/numerics/pte.py): the instruction compared, the source nodes it computes, and the
    # backend when the value is compared where it leaves a delegate
    instruction: int | None = optional()
    group: list[str] | None = optional()
    delegate: str | None = optional()
    kernel: str | None = optional()  # an AOTInductor candidate (core/numerics/aoti.py): the kernel call compared
    compared: bool | None = optional()  # false: no candidate value stands for it (`note` says why): never diverges


@dataclass
class DivergenceRecord(Schema):
    KIND = "first divergence"

    node: str
    error: Number
    inputs: list[str] = items()  # its compared inputs, all within the threshold


@dataclass
class Memory(Schema):
    KIND = "memory"

    peak_held_bytes: int = 0
    spilled_bytes: int = 0
    spilled_values: int = 0
    peak_rss_bytes: int = 0


@dataclass
class NumericsInputs(Schema):
    KIND = "inputs"

    source: str
    sizes: dict[str, int] = items(dict)


@dataclass
class NumericsResult(JobResult):
    KIND = "numerics result"
    VERSIONED = True

    cuda_available: bool | None = optional()
    cuda_unavailable_reason: str | None = optional()
    program: str | None = local_path(omit_none=True)
    program_name: str | None = optional()
    candidate: str | None = optional()
    kind: str | None = optional()  # "core", "functional", "table", "bf16", "fp16", "cuda", "compile", "aoti", "pte",
    # "package", "onnx" (a FILE.onnx or "onnx"), "script"
    threshold: float | None = optional()
    inputs: NumericsInputs | None = optional()
    imported: list[str] | None = optional()
    imports: list[dict[str, Any]] | None = optional()
    candidate_program: str | None = local_path(omit_none=True)  # save_candidate: the decomposed .pt2
    mapping: str | None = local_path(omit_none=True)  # and its node mapping
    compared_program: str | None = optional()  # a FILE.pte: which program's instructions were mapped, and how
    etrecord_used: str | None = local_path(omit_none=True)  # a FILE.pte: the ETRecord that mapped it
    etrecord_how: str | None = optional()  # "given", "beside" (NAME.etrecord by the .pte) or "relowered" (fresh)
    per_node: bool | None = optional()  # false: only the outputs could be compared
    note: str | None = optional()
    compared: int | None = optional()
    not_compared: list[str] | None = optional()
    first_divergence: DivergenceRecord | None = None
    worst: list[NodeErrorRecord] | None = optional()
    nodes: list[NodeErrorRecord] | None = optional()
    memory: Memory | None = optional()
    seconds: dict[str, float] | None = optional()
    log: list[str] = items()


__all__ = ["DivergenceRecord", "Memory", "NodeErrorRecord", "Number", "NumericsInputs", "NumericsRequest",
           "NumericsResult"]
