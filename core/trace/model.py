"""A torch.compile trace as dataclasses: what `core/trace/reader.py` reads from the structured log, with no torch
and nothing run. One `Trace` holds every rank's compiles; a `Compile` is one compile id of one rank, with the
artifacts torch logged under it (graphs as text, left in the log until asked for)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, order=True)
class CompileId:
    """torch's compile id: frame, the frame's compile (a recompile counts up), the attempt (a restart counts up);
    `compiled_autograd_id` for compiled autograd's graphs. Written as torch and tlparse write it: `[0/1]`,
    `[1/0_1]`, `[!0/2/0]`."""

    frame_id: int | None
    frame_compile_id: int | None
    attempt: int | None = 0
    compiled_autograd_id: int | None = None

    def __str__(self) -> str:
        prefix = f"!{self.compiled_autograd_id}/" if self.compiled_autograd_id is not None else ""
        frame = "-" if self.frame_id is None else str(self.frame_id)
        compile_ = "-" if self.frame_compile_id is None else str(self.frame_compile_id)
        attempt = f"_{self.attempt}" if self.attempt else ""
        return f"[{prefix}{frame}/{compile_}{attempt}]"

    @property
    def short(self) -> str:
        """`0/1` (as torch writes it inside recompile reasons): frame and compile, no attempt."""
        return str(self)[1:-1].split("_")[0]


@dataclass(frozen=True)
class SourceLine:
    """A place in the user's code: function, file and line."""

    function: str
    file: str
    line: int


@dataclass
class Artifact:
    """One thing torch logged under a compile id: a graph, the output code, a cache hit, metrics... Its text stays
    in the log (`log`, from byte `offset`, `size` bytes of tab-indented lines) until `text()` reads it."""

    name: str
    log: Path
    offset: int
    size: int
    encoding: str = "string"

    def text(self) -> str:
        """The payload as torch wrote it (each line's leading tab removed)."""
        if not self.size:
            return ""
        with open(self.log, "rb") as f:
            f.seek(self.offset)
            raw = f.read(self.size).decode("utf-8", errors="replace")
        return "\n".join(line[1:] if line.startswith("\t") else line for line in raw.rstrip("\n").split("\n"))


@dataclass
class GraphBreak:
    """One graph break as torch explained it, at the user's own line; `hits` every compile that hit it, with its
    rank (ranks number their compile ids alike: rank 0's `[0/0]` and rank 1's `[0/0]` are two hits)."""

    file: str
    line: int
    reason: str
    explanation: str
    hints: list[str]
    code: str | None
    url: str | None
    fix: str | None
    hits: list[tuple[int | None, str]] = field(default_factory=list)

    @property
    def compile_ids(self) -> list[str]:
        """The compile ids that hit it, each once, whichever ranks they are on."""
        return list(dict.fromkeys(cid for _, cid in self.hits))

    @property
    def ranks(self) -> list[int | None]:
        return list(dict.fromkeys(rank for rank, _ in self.hits))

    @property
    def said(self) -> str:
        """torch's reason with its explanation, in one line: "Data-dependent branching: Detected ..."."""
        return f"{self.reason}: {self.explanation}" if self.explanation else self.reason


@dataclass
class Recompile:
    """A compile made because the guards of earlier compiles failed: torch's guard text and the same in words."""

    compile_id: CompileId
    rank: int | None
    guard_failures: list[str]
    reasons: list[str]


@dataclass
class Compile:
    """One compile id of one rank: the user's frame, what happened, how long it took, what it made."""

    id: CompileId
    rank: int | None
    log: Path
    frame: SourceLine | None = None
    stack: list[SourceLine] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: dict[str, object] = field(default_factory=dict)
    graph_break_texts: list[str] = field(default_factory=list)
    recompile_texts: list[str] = field(default_factory=list)
    status: str = "compiled"

    @property
    def seconds(self) -> float | None:
        value = self.metrics.get("entire_frame_compile_time_s")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def phases(self) -> dict[str, float]:
        """Compile time by phase, where the trace says (backend, inductor, code generation), in seconds."""
        names = {"backend_compile_time_s": "backend", "inductor_compile_time_s": "inductor",
                 "code_gen_time_s": "code_gen", "dynamo_time_before_restart_s": "before_restart"}
        return {label: float(v) for key, label in names.items()
                if isinstance(v := self.metrics.get(key), (int, float)) and v}

    @property
    def cache_hit(self) -> bool:
        """An FX-graph or AOTAutograd cache hit: the graph was compiled by an earlier run, and replayed."""
        return any(a.name.endswith("_cache_hit") for a in self.artifacts)

    @property
    def fail_reason(self) -> str | None:
        reason = self.metrics.get("fail_reason")
        return str(reason) if reason else None

    @property
    def restart_reasons(self) -> list[str]:
        reasons = self.metrics.get("restart_reasons")
        return [str(r) for r in reasons] if isinstance(reasons, list) else []

    def artifact(self, name: str) -> Artifact | None:
        return next((a for a in self.artifacts if a.name == name), None)


@dataclass
class Trace:
    """Everything read from a trace: its logs, compiles of every rank, graph breaks once each, recompiles.
    `damage` says where a damaged log stopped being read (what came before it is here)."""

    path: Path
    logs: list[Path]
    compiles: list[Compile]
    graph_breaks: list[GraphBreak]
    recompiles: list[Recompile]
    damage: str | None = None

    @property
    def ranks(self) -> list[int | None]:
        return sorted({c.rank for c in self.compiles}, key=lambda r: -1 if r is None else r)
