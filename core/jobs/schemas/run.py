"""The run job's request and result (`core/run/job.py`; the JSON is documented in docs/jobs.md, "run_program"). The
result is also what `pt2-viewer run --json` prints (without `log`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.jobs.schemas.base import Number, Schema, items, local_path, optional
from pt2_viewer.core.jobs.schemas.failure import JobResult


@dataclass
class ProgramRequest(Schema):
    """What every job on a `.pt2` is asked first: which file and program, what to import, what the user trusts."""

    program: str | None = local_path()  # the .pt2
    program_name: str | None = None  # which program of the archive (default: "model")
    preload: str | None = local_path()  # a .py file to import first (a custom op's definition)
    trust: bool = False  # the user trusts the file to run the code it holds (core/jobs/archive_check.py)
    allow_imports: list[str] = items()  # installed modules the user allows beyond the default libraries
    allow_native: bool = False  # an AOTInductor package's compiled code may be loaded


@dataclass
class RunRequest(ProgramRequest):
    KIND = "run request"
    VERSIONED = True

    device: str = "cpu"  # "cpu", "cuda" or "cuda:N"
    inputs: str = "auto"  # "auto" (sample when saved), "sample" or "generated"
    dims: dict[str, int] | None = None  # sizes of dynamic dims for generated inputs ({"s0": 8}, {"x.shape[0]": 8})
    seed: int = 0
    warmup: int = 3
    runs: int = 10
    preview: int = 8  # values shown per output
    node_times: bool = False
    compile: bool = False
    aoti: bool = False
    aoti_package: str | None = local_path()  # where to write the AOTInductor package (default OUT/model.aoti.pt2)


@dataclass
class Latency(Schema):
    KIND = "latency"

    warmup: int
    runs: int
    median_s: float
    min_s: float
    max_s: float
    iqr_s: float  # 75th - 25th percentile


@dataclass
class Difference(Schema):
    """A build's outputs against eager: the largest differences, or the mismatch that left nothing to compare."""

    KIND = "difference"

    max_abs: Number | None = None  # "inf" or "nan" when not finite
    max_rel: Number | None = None
    worst_output: str | None = None
    mismatch: str | None = None


@dataclass(kw_only=True)
class Build(Schema):
    """torch.compile's or AOTInductor's run beside eager."""

    KIND = "build"

    package: str | None = local_path(omit_none=True)  # AOTInductor: the package written
    compile_s: float
    latency: Latency
    speedup: float  # eager median / this median
    difference: Difference


@dataclass
class Inputs(Schema):
    KIND = "inputs"

    source: str  # "sample", "generated", or "wrapper" (an AOTInductor package's input checks)
    sizes: dict[str, int] = items(dict)  # {symbol: value}
    values: list[dict[str, Any]] | None = optional()  # summaries, as `outputs`
    note: str | None = optional()  # where generated inputs came from (an AOTInductor wrapper's checks)


@dataclass
class Hot(Schema):
    KIND = "hot node"

    node: str
    seconds: float


@dataclass
class KernelTime(Schema):
    """One kernel call of an AOTInductor package, timed through torch.profiler (core/run/aoti_profile.py)."""

    KIND = "kernel time"

    kernel: str
    seconds: float  # the least over the profiled runs
    handle: str = ""  # torch's provenance key, NAME:N
    line: int = 0  # the call's line in the wrapper
    nodes: list[str] = items()  # the program nodes it computes (a fused kernel's group)


@dataclass
class OpTimeStats(Schema):
    """One `.pte` instruction's times over the runs an imported ETDump holds (core/deploy/etdump_import.py)."""

    KIND = "op time stats"

    median_s: float
    p90_s: float
    count: int  # the runs it was timed in


@dataclass
class DelegateEventTime(Schema):
    """An event a delegate logged from inside itself (XNNPACK's per-operator profiling), on its call's node."""

    KIND = "delegate event"

    node: str  # the delegate call's node in the .pte graph
    event: str  # the backend's own name for it
    backend: str
    median_s: float
    p90_s: float
    count: int
    source_nodes: list[str] = items()  # where the ETRecord's delegate map names them


@dataclass
class RunResult(JobResult):
    KIND = "run result"
    VERSIONED = True

    cuda_available: bool | None = optional()  # always there from the job: the GUI disables CUDA and says why
    cuda_unavailable_reason: str | None = optional()
    program: str | None = local_path(omit_none=True)
    program_name: str | None = optional()
    device: str | None = optional()
    imported: list[str] | None = optional()
    imports: list[dict[str, Any]] | None = optional()  # what was imported and why (core/jobs/import_policy.py)
    inputs: Inputs | None = optional()
    # per output leaf: name, kind, dtype, shape, device, numel, min, max, mean, nan, inf, preview
    outputs: list[dict[str, Any]] | None = optional()
    latency: Latency | None = optional()
    node_times: dict[str, float] | None = optional()  # slowest first
    hottest: list[Hot] | None = optional()
    source_node_times: dict[str, float] | None = optional()  # a .pte with its source and ETRecord: by source node
    etrecord_used: str | None = local_path(omit_none=True)  # the ETRecord that mapped source_node_times
    etrecord_how: str | None = optional()  # "given", "beside" (NAME.etrecord by the .pte) or "relowered" (fresh)
    etdump: str | None = local_path(omit_none=True)  # a .pte's ETDump imported instead of running it
    node_time_stats: dict[str, OpTimeStats] | None = optional()  # an imported ETDump: per .pte node, over its runs
    delegate_events: list[DelegateEventTime] | None = optional()  # an imported ETDump: events inside delegates
    delegate_events_note: str | None = optional()  # the delegates the recording has no events from inside
    kernel_times: list[KernelTime] | None = optional()  # an AOTInductor package's kernels, slowest first
    kernel_times_note: str | None = optional()  # why no kernel could be timed
    compile: Build | None = optional()
    aoti: Build | None = optional()
    seconds: dict[str, float] | None = optional()
    log: list[str] = items()


__all__ = ["Build", "Difference", "Hot", "Inputs", "KernelTime", "Latency", "ProgramRequest", "RunRequest", "RunResult"]
