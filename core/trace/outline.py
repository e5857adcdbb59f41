"""What the window's trace view shows, in words and without Qt: one rank's compiles grouped by frame, each compile's
title, status and times, its graphs by name (a compile with a backward pass logs Inductor's post-grad graph and code
twice: forward, then backward), the compile a recompile replaced (to diff their graphs), the fix for a failed guard,
and whether Inductor's code has provenance. The view (app/trace/) lays these out; the trace itself is
core/trace/reader.py's."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace

from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.trace.graph_program import program_from_artifact
from pt2_viewer.core.trace.model import Artifact, Compile, CompileId, GraphBreak, Recompile, Trace
from pt2_viewer.core.trace.reader import GRAPHS

GRAPH_TITLES = {"dynamo": "Dynamo graph", "aot_forward": "AOTAutograd forward", "aot_backward": "AOTAutograd backward",
                "aot_joint": "AOTAutograd joint", "aot_inference": "AOTAutograd inference",
                "post_grad": "Inductor post-grad graph", "inductor_code": "Inductor output code"}
PROVENANCE = "inductor_provenance_tracking_node_mappings"
NO_PROVENANCE = "no provenance in this trace"
PHASES = {"backend": "backend compile", "inductor": "Inductor", "code_gen": "code generation",
          "before_restart": "before the restart"}


@dataclass
class GraphEntry:
    """One graph a compile made: its kind (`dynamo`, `aot_forward`, ..., the `trace` command's names), its title for
    a person, and the artifact that holds its text."""

    kind: str
    title: str
    artifact: Artifact
    index: int = 0  # among the compile's graphs of this record (the backward's post-grad graph is the second)

    @property
    def is_code(self) -> bool:
        """Inductor's output code: Python source with kernels, not a graph."""
        return self.kind == "inductor_code"


@dataclass
class Frame:
    """One frame dynamo compiled, on one rank: the user's function and line, and its compiles in order."""

    frame_id: int | None
    title: str
    compiles: list[Compile] = field(default_factory=list)


def frames(trace: Trace, rank: int | None) -> list[Frame]:
    """The compiles of `rank` (None: a single-process trace) grouped by frame, frames in the order torch met them."""
    grouped: dict[tuple[int | None, int | None], Frame] = {}
    for c in trace.compiles:
        if c.rank != rank:
            continue
        key = (c.id.compiled_autograd_id, c.id.frame_id)
        frame = grouped.get(key)
        if frame is None:
            where = f"{c.frame.function} ({short_file(c.frame.file)}:{c.frame.line})" if c.frame else "?"
            prefix = f"compiled autograd {c.id.compiled_autograd_id}, " if c.id.compiled_autograd_id is not None else ""
            frame = grouped[key] = Frame(c.id.frame_id, f"{prefix}frame {c.id.frame_id}: {where}")
        frame.compiles.append(c)
    return list(grouped.values())


def short_file(path: str) -> str:
    """A file's name without its folder (the full path is in the tooltip and the link)."""
    return re.split(r"[/\\]", path)[-1]


def kind_of(cid: CompileId) -> str:
    """"restart" for a later attempt ([1/0_1]), "recompile" for a frame's later compile ([0/1]), else ""."""
    if cid.attempt:
        return "restart"
    return "recompile" if cid.frame_compile_id else ""


def title(compile_: Compile) -> str:
    """The compile's row: `[0/1] recompile`."""
    kind = kind_of(compile_.id)
    return f"{compile_.id} {kind}" if kind else str(compile_.id)


def seconds_text(compile_: Compile) -> str:
    return f"{compile_.seconds:.2f} s" if compile_.seconds is not None else ""


def phases_text(compile_: Compile) -> str:
    """Compile time by phase, one per line ("Inductor: 1.95 s"), or a line saying the trace has none."""
    phases = compile_.phases
    if not phases:
        return "The trace gives no compile time by phase for this compile."
    total = f"Compile time {compile_.seconds:.2f} s, of which:\n" if compile_.seconds is not None else ""
    return total + "\n".join(f"  {PHASES.get(k, k)}: {v:.2f} s" for k, v in phases.items())


def cache_text(compile_: Compile) -> str:
    """Which caches this compile's graphs came from, or ""."""
    hits = [a.name.removesuffix("_cache_hit") for a in compile_.artifacts if a.name.endswith("_cache_hit")]
    names = {"fx_graph": "FX graph cache", "aotautograd": "AOTAutograd cache"}
    said = sorted({names.get(h, h) for h in hits})
    return (f"cache hit ({', '.join(said)}): replayed from an earlier run, with that run's source lines"
            if said else "")


def graphs(compile_: Compile) -> list[GraphEntry]:
    """The graphs of a compile in the order torch logged them; a graph logged twice (Inductor's forward and
    backward) is told apart."""
    entries = [GraphEntry(GRAPHS[a.name], GRAPH_TITLES[GRAPHS[a.name]], a)
               for a in compile_.artifacts if a.name in GRAPHS]
    backward = any(e.kind == "aot_backward" for e in entries)
    seen: dict[str, int] = {}
    for entry in entries:
        count = seen[entry.kind] = seen.get(entry.kind, 0) + 1
        entry.index = count - 1
        twice = sum(e.kind == entry.kind for e in entries) > 1
        if twice and backward and count <= 2:
            entry.title += " (forward)" if count == 1 else " (backward)"
        elif twice:
            entry.title += f" #{count}"
    return entries


def graph_archive(trace: Trace, compile_: Compile, entry: GraphEntry) -> Archive:
    """The graph `entry` of `compile_` as an archive of one program, for the graph view as a `.pt2`'s
    (core/trace/graph_program.py reads its text); its path is the trace's. TraceError, one line, for a graph it
    cannot read, or Inductor's code, which is no graph."""
    program = program_from_artifact(trace, str(compile_.id), entry.artifact.name, entry.index, compile_.rank)
    if not program.torch_version and isinstance(version := compile_.metrics.get("pytorch_version"), str):
        program.torch_version = version  # the torch that compiled it, as its compile's metrics say (Details)
    return Archive(path=str(trace.path), root="", entries=[], programs=[program],
                   archive_format="torch.compile trace", archive_version="", byteorder="")


def provenance_note(compile_: Compile) -> str:
    """Whether Inductor's code can be linked to the graph's nodes: torch records provenance only with
    `trace.provenance_tracking_level` set (0 by default); an empty mapping is none."""
    mappings = [a for a in compile_.artifacts if a.name == PROVENANCE and a.size > 0]
    if not mappings:
        return NO_PROVENANCE
    return f"provenance: {len(mappings)} kernel-to-node mapping{'s' if len(mappings) > 1 else ''} in this trace"


def replaced(trace: Trace, compile_: Compile) -> Compile | None:
    """The compile a recompile follows: the same frame on the same rank, one compile earlier (its last attempt)."""
    cid = compile_.id
    if not cid.frame_compile_id:
        return None
    earlier = [c for c in trace.compiles if c.rank == compile_.rank and c.id.frame_id == cid.frame_id
               and c.id.compiled_autograd_id == cid.compiled_autograd_id
               and c.id.frame_compile_id == cid.frame_compile_id - 1]
    return max(earlier, key=lambda c: c.id.attempt or 0) if earlier else None


def graph_diff(before: Compile, after: Compile, kind: str = "dynamo") -> str | None:
    """The first `kind` graph of `before` against that of `after`, as a unified diff of their text; None when
    either has no such graph."""
    old = next((g for g in graphs(before) if g.kind == kind), None)
    new = next((g for g in graphs(after) if g.kind == kind), None)
    if old is None or new is None:
        return None
    lines = difflib.unified_diff(old.artifact.text().splitlines(), new.artifact.text().splitlines(),
                                 f"{before.id} {GRAPH_TITLES[kind]}", f"{after.id} {GRAPH_TITLES[kind]}", lineterm="")
    return "\n".join(lines) or f"{before.id} and {after.id} made the same {GRAPH_TITLES[kind]}."


_SIZE_SAID = re.compile(r"`(.+?)\.(?:size|stride)\((\d+)\)`")
_OTHER_SAID = re.compile(r"`.+?\.(dtype|device|requires_grad)`")


def recompile_fix(recompile: Recompile) -> str | None:
    """What to do about a recompile, by the guard that failed: for a size, mark that dimension dynamic
    (`torch._dynamo.mark_dynamic`, `dynamic=True`, or a `Dim` under torch.export); for a dtype or device, one compile
    per kind of input is what guards are for."""
    said = " ".join(recompile.reasons)
    if size := _SIZE_SAID.search(said):
        name, dim = size.groups()
        return (f"mark the dimension dynamic before the first call: torch._dynamo.mark_dynamic({name}, {dim}), or "
                f"compile with torch.compile(..., dynamic=True); under torch.export, a Dim in dynamic_shapes")
    if other := _OTHER_SAID.search(said):
        return (f"call with the {other.group(1)} it was compiled for, or accept one compile per kind of input "
                "(torch._dynamo.config.recompile_limit bounds how many)")
    return None


def detail(trace: Trace, compile_: Compile) -> str:
    """Everything about one compile, for a person: where, what became of it, its time by phase, its graphs, why it
    recompiled, broke, failed or restarted, and whether its Inductor code has provenance."""
    kind = kind_of(compile_.id)
    lines = [f"{compile_.id}" + (f" ({kind})" if kind else "") + (f" on rank {compile_.rank}"
                                                                 if compile_.rank is not None else "")]
    if compile_.frame:
        lines.append(f"{compile_.frame.function} at {compile_.frame.file}:{compile_.frame.line}")
    lines += [f"Status: {compile_.status}", phases_text(compile_)]
    if hit := cache_text(compile_):
        lines.append(f"Cache: {hit}")
    made = graphs(compile_)
    lines += ["Graphs (double-click one in the tree to open it):", *(f"  {g.title}" for g in made)] if made \
        else ["Graphs: none"]
    if any(g.is_code for g in made):
        lines.append(f"Inductor code: {provenance_note(compile_)}")
    recompile = next((r for r in trace.recompiles if r.compile_id == compile_.id and r.rank == compile_.rank), None)
    if recompile is not None:
        lines += ["Recompiled because:", *(f"  {r}" for r in recompile.reasons)]
        if fix := recompile_fix(recompile):
            lines.append(f"Fix: {fix}")
    breaks = [b for b in trace.graph_breaks if (compile_.rank, str(compile_.id)) in b.hits]
    for b in breaks:
        lines.append(f"Graph break at {short_file(b.file)}:{b.line}: {b.said}")
    if compile_.fail_reason:
        lines.append(f"Failed: {compile_.fail_reason}")
    for reason in compile_.restart_reasons:
        lines.append(f"Restarted: {reason}")
    return "\n".join(lines)


def breaks_of(trace: Trace, rank: int | None) -> list[GraphBreak]:
    """The graph breaks `rank` hit (each once), each with that rank's compiles alone."""
    return [replace(b, hits=[h for h in b.hits if h[0] == rank]) for b in trace.graph_breaks if rank in b.ranks]


def recompiles_of(trace: Trace, rank: int | None) -> list[Recompile]:
    return [r for r in trace.recompiles if r.rank == rank]


def headline(trace: Trace, rank: int | None) -> str:
    """"14 compiles in 9 frames, 3 graph breaks, 4 recompiles" for `rank`."""
    compiles = [c for c in trace.compiles if c.rank == rank]
    n_frames = len({(c.id.compiled_autograd_id, c.id.frame_id) for c in compiles})
    hits = sum(c.cache_hit for c in compiles)
    parts = [_count(len(compiles), "compile") + f" in {_count(n_frames, 'frame')}",
             _count(len(breaks_of(trace, rank)), "graph break"), _count(len(recompiles_of(trace, rank)), "recompile")]
    if hits:
        parts.append(f"{hits} from the cache")
    return ", ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
