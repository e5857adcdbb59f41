"""What the run panel shows about running a program: the inputs form's dynamic dims, the request sent to the worker's
`run_program` job, and its result turned into table rows, latency lines, per-node heat and failure text.

The run job (core/run/job.py) returns plain JSON; this module decides how that reads for a person (times in
ms or µs, NaN counts, "3.2× faster") and how per-node times become heat values from 0 to 1 for the graph overlay.
No Qt and no torch, so it is tested on real job results without a window.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.jobs.schemas.failure import Failure, saying_where_the_log_is
from pt2_viewer.core.jobs.schemas.run import Difference, Latency, RunRequest, RunResult
from pt2_viewer.core.model.program import InputKind, Program
from pt2_viewer.core.util.words import format_seconds

INPUT_MODES = ("auto", "sample", "generated")


def input_choices(generated: str) -> tuple[tuple[str, str], ...]:
    """The inputs a run (or a comparison) can use, with their labels; `generated` says how generated inputs are
    sized in that view."""
    labels = ("Sample inputs when saved, else generated", "Sample inputs saved with the program", generated)
    return tuple(zip(INPUT_MODES, labels, strict=True))
MIN_DYNAMIC = 2  # export specialises sizes 0 and 1, so a dynamic dim starts at 2
UNBOUNDED_MAX = 1 << 20  # what the form allows when the program sets no upper bound
SPIN_LIMIT = 2**31 - 1  # a Qt spin box holds a C int
DEFAULT_SIZE = 4  # a size with no traced value: as core/run/inputs.py picks

# What the user can do, by failure kind, beyond the job's own hint.
ADVICE = {
    "missing_op": "Name the Python file that defines the custom op under 'Import first', then run again.",
    "missing_type": "Name the Python file that registers the type under 'Import first', then run again.",
    "import": "Check the 'Import first' file: it must exist and import without error.",
    "constraint": "Change the sizes in the inputs form so they fit the program's ranges.",
    "input": "Use generated inputs, or change the sizes in the inputs form.",
    "oom": "Lower the dynamic sizes in the inputs form, or run on CPU.",
    "cuda": "Run on CPU instead.",
}
# Kinds whose job hint gives the same advice in the command line's words: the window's advice replaces it.
ADVICE_REPLACES_HINT = {"missing_op", "missing_type"}


@dataclass
class DimField:
    """One dynamic size in the inputs form: a dim of a tensor input, or a dynamic int input."""

    symbol: str  # "s77"
    sources: list[str]  # ["x.shape[0]", "y.shape[0]"], or ["n"] for an int input
    minimum: int
    maximum: int  # what the form allows: the program's max, UNBOUNDED_MAX when it sets none, at most SPIN_LIMIT
    default: int
    upper: int | None = None  # the program's own max; None when unbounded (Dim.AUTO, Dim.DYNAMIC, no max)

    @property
    def label(self) -> str:
        return f"{', '.join(self.sources) or self.symbol}"

    @property
    def range_text(self) -> str:
        top = "∞" if self.upper is None else str(self.upper)
        return f"{self.symbol} in [{self.minimum}, {top}]"


def _int_inputs(program: Program) -> dict[str, tuple[str, int | None]]:
    """symbol -> (input name, traced value) for the program's dynamic int inputs (`n: int` exported as Dim.DYNAMIC)."""
    user = {s.name for s in program.signature.inputs if s.kind is InputKind.USER_INPUT}
    out: dict[str, tuple[str, int | None]] = {}
    for name in program.graph.inputs:
        v = program.graph.values.get(name or "")
        if name in user and v is not None and v.kind == "sym_int" and v.expr is not None and \
                v.expr.symbols == (v.expr.text,):
            out.setdefault(v.expr.text, (name, v.expr.hint if isinstance(v.expr.hint, int) else None))
    return out


def dim_fields(program: Program) -> list[DimField]:
    """A form field for every backed symbol a user input sets (a tensor dim, or an int input), with its range and
    traced size, in input order then dim order. Symbols that are expressions of others (`s17*s77`) follow from
    those and get no field; an unbounded or huge range end is capped at what a spin box holds."""
    order = {name: i for i, name in enumerate(program.graph.inputs)}
    ints = _int_inputs(program)
    fields: list[tuple[tuple[int, int], DimField]] = []
    for s in program.symbols:
        if s.unbacked or not s.name.isidentifier():
            continue
        sources, hint, floor = list(s.sources), s.hint, MIN_DYNAMIC
        if not sources and s.name in ints:
            name, hint = ints[s.name]
            sources, floor = [name], 0  # an int input is not a size: 0 and 1 are not specialised
        if not sources:
            continue  # no input sets it
        low = min(max(s.min if s.min is not None else floor, floor), SPIN_LIMIT)
        high = max(min(s.max if s.max is not None else UNBOUNDED_MAX, SPIN_LIMIT), low)
        default = min(max(hint if hint is not None else max(low, DEFAULT_SIZE), low), high)
        first, _, dim = sources[0].partition(".shape[")
        key = (order.get(first, len(order)), int(dim.rstrip("]")) if dim.rstrip("]").isdigit() else -1)
        fields.append((key, DimField(s.name, sources, low, high, default, s.max)))
    return [f for _key, f in sorted(fields, key=lambda kf: kf[0])]


@dataclass
class RunOptions:
    """What the user chose in the run panel."""

    device: str = "cpu"
    inputs: str = "auto"  # one of INPUT_MODES
    dims: dict[str, int] = field(default_factory=dict)  # symbol -> size, for generated inputs
    seed: int = 0
    warmup: int = 3
    runs: int = 10
    node_times: bool = True
    compile: bool = False
    aoti: bool = False
    aoti_package: str | None = None  # where to save the AOTInductor package
    preload: str | None = None  # a Python file to import first (a custom op's definition)


def build_request(program_path: str, program_name: str | None, options: RunOptions) -> RunRequest:
    """The `run_program` job's request for these options (docs/jobs.md)."""
    if options.inputs not in INPUT_MODES:
        raise ValueError(f"inputs must be one of {', '.join(INPUT_MODES)}, not {options.inputs!r}")
    return RunRequest(program=program_path, program_name=program_name or None, preload=options.preload or None,
                      device=options.device, inputs=options.inputs, seed=options.seed, warmup=options.warmup,
                      runs=options.runs, node_times=options.node_times, compile=options.compile, aoti=options.aoti,
                      dims=dict(options.dims) if options.inputs == "generated" and options.dims else None,
                      aoti_package=options.aoti_package if options.aoti and options.aoti_package else None)


# -- reading the result -------------------------------------------------------------------------------------------
def _number(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


@dataclass
class OutputRow:
    """One output leaf of the program, as the results table shows it."""

    name: str
    dtype: str
    shape: str
    minimum: str
    maximum: str
    mean: str
    nan: int
    inf: int
    preview: str

    COLUMNS = ("output", "dtype", "shape", "min", "max", "mean", "NaN", "Inf", "preview")

    def cells(self) -> list[str]:
        return [self.name, self.dtype, self.shape, self.minimum, self.maximum, self.mean, str(self.nan),
                str(self.inf), self.preview]

    @property
    def bad(self) -> bool:
        """NaN or Inf in the output: worth a colour."""
        return bool(self.nan or self.inf)


def dtype_text(summary: dict[str, Any]) -> str:
    """'float32', or with the layout when it is not strided: 'float32 sparse_coo', 'quint8 quantized'."""
    layout = summary.get("layout", "strided")
    return f"{summary.get('dtype', '')} {layout}" if layout != "strided" else str(summary.get("dtype", ""))


def output_row(summary: dict[str, Any]) -> OutputRow:
    if summary.get("kind") != "tensor":
        value = _number(summary.get("value"))
        return OutputRow(summary["name"], summary.get("kind", ""), "", "", "", "", 0, 0, value)
    preview = ", ".join(_number(v) for v in summary.get("preview", []))
    if summary.get("numel", 0) > len(summary.get("preview", [])):
        preview += ", …"
    return OutputRow(summary["name"], dtype_text(summary), "[" + ", ".join(map(str, summary["shape"])) + "]",
                     _number(summary.get("min")), _number(summary.get("max")), _number(summary.get("mean")),
                     int(summary.get("nan", 0)), int(summary.get("inf", 0)), preview)


def output_rows(result: RunResult) -> list[OutputRow]:
    return [output_row(s) for s in result.outputs or []]


def latency_text(latency: Latency) -> str:
    """'median 1.20 ms, spread (IQR) 0.05 ms, min 1.10 ms, max 1.60 ms; 10 runs after 3 warm-up'."""
    return (f"median {format_seconds(latency.median_s)}, spread (IQR) {format_seconds(latency.iqr_s)}, "
            f"min {format_seconds(latency.min_s)}, max {format_seconds(latency.max_s)}; "
            f"{latency.runs} runs after {latency.warmup} warm-up")


def _difference_text(diff: Difference) -> str:
    if diff.mismatch:
        return f"outputs differ in structure: {diff.mismatch}"
    return f"max abs difference {_number(diff.max_abs)}, max rel {_number(diff.max_rel)}"


def comparison_lines(result: RunResult) -> list[str]:
    """One line each for torch.compile and AOTInductor, when they ran."""
    lines = []
    for part, title in ((result.compile, "torch.compile"), (result.aoti, "AOTInductor")):
        if part is None:
            continue
        line = (f"{title}: compiled in {format_seconds(part.compile_s)}, median "
                f"{format_seconds(part.latency.median_s)} ({part.speedup:.2f}× eager); "
                f"{_difference_text(part.difference)}")
        if part is result.aoti:
            line += f"; package {part.package}"
        lines.append(line)
    return lines


def heat_values(node_times: dict[str, float]) -> dict[str, float]:
    """Per-node time scaled to 0..1 by the slowest node (1.0), for the graph's colour overlay."""
    top = max(node_times.values(), default=0.0)
    if top <= 0:
        return {name: 0.0 for name in node_times}
    return {name: max(0.0, min(1.0, t / top)) for name, t in node_times.items()}


@dataclass
class HotNode:
    node: str
    seconds: float
    share: float  # of the summed per-node time, 0..1

    def text(self) -> str:
        return f"{self.node}  {format_seconds(self.seconds)}  ({self.share:.0%})"


def hottest(result: RunResult, limit: int = 10) -> list[HotNode]:
    times = result.node_times or {}
    total = sum(times.values()) or 1.0
    ranked = sorted(times.items(), key=lambda kv: -kv[1])[:limit]
    return [HotNode(n, s, s / total) for n, s in ranked]


@dataclass
class RunFailure:
    kind: str
    message: str
    hint: str
    detail: str

    def text(self, log: str = "") -> str:
        """The message, hint and advice; `log` says where "the log" they name is ("below": the failure box)."""
        advice = ADVICE.get(self.kind, "")
        hint = "" if self.kind in ADVICE_REPLACES_HINT else self.hint
        text = " ".join(part for part in (self.message, hint, advice) if part)
        return saying_where_the_log_is(text, log) if log else text


def failure_of(result: RunResult | None) -> RunFailure | None:
    """The job's failure in words, or None when it ran."""
    if result is None or result.ok:
        return None
    e = result.error or Failure("run", "The run failed.")
    return RunFailure(e.kind, e.message, e.hint, e.detail)


@dataclass(frozen=True)
class CudaStatus:
    available: bool
    reason: str  # why not, when not

    def button_tip(self) -> str:
        return "Run on the GPU" if self.available else f"CUDA is not available: {self.reason}."


def cuda_status_of(result: RunResult | None) -> CudaStatus | None:
    """What the worker's torch said about CUDA (every run result carries it, even a failed one)."""
    if result is None or result.cuda_available is None:
        return None
    return CudaStatus(result.cuda_available, result.cuda_unavailable_reason or "")


# A request the run job rejects at once (it names no program), after saying whether torch sees CUDA.
CUDA_PROBE_REQUEST = RunRequest()
