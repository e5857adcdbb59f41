"""A profiler trace as dataclasses: its events as `torch.profiler` writes them (Chrome's trace event format), and
what attributing them to a program's nodes answers."""
from __future__ import annotations

from dataclasses import dataclass, field

# Chrome trace categories torch.profiler (Kineto) writes, by what the attribution does with them.
CPU_OP_CATEGORIES = frozenset({"cpu_op", "operator"})  # an aten (or custom) op run on a CPU thread
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver", "hip_runtime", "hip_driver"})  # a launch: cudaLaunch*
DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})  # what ran on the device


@dataclass(frozen=True)
class TraceEvent:
    """One complete ("ph": "X") event: `ts` and `dur` in microseconds, as the trace holds them."""

    name: str
    category: str
    ts: float
    dur: float
    pid: int | str
    tid: int | str
    correlation: int | None = None  # args.correlation: a runtime launch and the kernels it launched share it
    external_id: int | None = None  # args["External id"]: the CPU op a launch or kernel came from
    device: int | None = None  # args.device: the GPU a kernel ran on
    shared_by: int = 0  # a compiled kernel's share: its time split between this many nodes (0: the event itself)
    op_name: str = ""  # args.op_name: the ONNX op an ONNX Runtime node event ran (Conv, FusedConv)
    provider: str = ""  # args.provider: the execution provider ONNX Runtime ran it on (CPUExecutionProvider)

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def thread(self) -> tuple[str, str]:
        return (str(self.pid), str(self.tid))


@dataclass
class ProfileTrace:
    """The events of one trace file that attribution reads (complete events only; metadata and instants are not
    timed work)."""

    path: str
    events: list[TraceEvent] = field(default_factory=list)

    def of(self, categories: frozenset[str]) -> list[TraceEvent]:
        return [e for e in self.events if e.category.lower() in categories]


@dataclass
class NodeTime:
    """What one node of the program took: `calls` (how often it ran), `us` (its total), on `device`."""

    node: str
    target: str
    calls: int = 0
    us: float = 0.0
    device: str = "cpu"
    events: list[TraceEvent] = field(default_factory=list)  # the events attributed to it, for Details

    @property
    def mean_us(self) -> float:
        return self.us / self.calls if self.calls else 0.0


@dataclass
class Attribution:
    """A trace on a program: per node times (in graph order), how many runs of the program the trace holds
    (`calls`), the device the times are on, and the time that belongs to no node (`unattributed_us`)."""

    program: str
    trace: str
    device: str
    calls: int
    nodes: list[NodeTime]
    unattributed_us: float
    notes: list[str] = field(default_factory=list)  # what the user should know: ops outside the program's runs
