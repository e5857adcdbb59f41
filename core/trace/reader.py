"""A `TORCH_TRACE` folder, or one of its logs, read into a `Trace`: compiles per rank, graph breaks once each at
the user's line, recompiles with their failed guards in words. No torch, nothing from the trace run.

A folder holds one `dedicated_log_torch_trace_*.log` per process (`..._rank_N_...` under torchrun); each is read
on its own, its rank from the records' `rank` or the file's name. A damaged log is read up to the damage."""
from __future__ import annotations

import json
import re
from pathlib import Path

from pt2_viewer.core.trace.envelope import Envelope, LogRead, TraceError, read_log
from pt2_viewer.core.trace.explain import guard_failures, in_words, is_torch_file, read_graph_break
from pt2_viewer.core.trace.files import LOG_GLOB
from pt2_viewer.core.trace.model import Artifact, Compile, CompileId, GraphBreak, Recompile, SourceLine, Trace

_RANK_IN_NAME = re.compile(r"dedicated_log_torch_trace_rank_(\d+)_")
# Records that are bookkeeping, not a compile's own: a compile id seen only in these is not listed.
NOISE = frozenset({"chromium_event", "describe_storage", "describe_tensor", "describe_source", "str", "unknown"})
# The graphs of a compile, by the record torch writes them in, under the names the `trace` command gives them.
GRAPHS: dict[str, str] = {
    "dynamo_output_graph": "dynamo",
    "aot_forward_graph": "aot_forward",
    "aot_backward_graph": "aot_backward",
    "aot_joint_graph": "aot_joint",
    "aot_inference_graph": "aot_inference",
    "inductor_post_grad_graph": "post_grad",
    "inductor_output_code": "inductor_code",
}


def trace_logs(path: Path) -> list[Path]:
    """The logs of a trace: the file itself, or every trace log in the folder. TraceError when there is none."""
    if path.is_dir():
        logs = sorted(path.glob(LOG_GLOB))
        if not logs:
            raise TraceError(f"{path}: no dedicated_log_torch_trace_*.log in this folder; run with "
                             "TORCH_TRACE=DIR and give DIR")
        return logs
    if not path.exists():
        raise TraceError(f"{path}: no such file or folder")
    return [path]


def read_trace(path: str | Path) -> Trace:
    """Every log of the trace at `path` read into one Trace. A damaged log stops at its damage (`Trace.damage`
    names the log and the line); the records before it are kept."""
    root = Path(path)
    compiles: list[Compile] = []
    damage: list[str] = []
    logs = trace_logs(root)
    for log in logs:
        read = read_log(log)
        compiles.extend(_compiles(read))
        if read.damage:
            damage.append(f"{log.name}: {read.damage}")
    return Trace(path=root, logs=logs, compiles=compiles, graph_breaks=_graph_breaks(compiles),
                 recompiles=_recompiles(compiles), damage="; ".join(damage) or None)


def _file_rank(log: Path) -> int | None:
    match = _RANK_IN_NAME.match(log.name)
    return int(match.group(1)) if match else None


def _compiles(read: LogRead) -> list[Compile]:
    by_id: dict[CompileId, Compile] = {}
    default_rank = _file_rank(read.path)
    for env in read.envelopes:
        if env.compile_id is None or env.kind in NOISE:
            continue
        compile_ = by_id.get(env.compile_id)
        if compile_ is None:
            rank = env.rank if env.rank is not None else default_rank
            compile_ = by_id[env.compile_id] = Compile(id=env.compile_id, rank=rank, log=read.path)
        _add(compile_, env, read.strings)
    for compile_ in by_id.values():
        compile_.status = _status(compile_, by_id)
        first = by_id.get(CompileId(compile_.id.frame_id, compile_.id.frame_compile_id, 0,
                                    compile_.id.compiled_autograd_id))
        if compile_.frame is None and first is not None:  # torch logs dynamo_start on a frame's first attempt
            compile_.frame, compile_.stack = first.frame, first.stack
    return sorted(by_id.values(), key=lambda c: _order(c.id))


def _order(cid: CompileId) -> tuple[int, int, int, int]:
    return (-1 if cid.compiled_autograd_id is None else cid.compiled_autograd_id,
            -1 if cid.frame_id is None else cid.frame_id,
            -1 if cid.frame_compile_id is None else cid.frame_compile_id, cid.attempt or 0)


def _add(compile_: Compile, env: Envelope, strings: dict[int, str]) -> None:
    if env.kind == "dynamo_start":
        compile_.stack = [_source_line(f, strings) for f in env.stack]
        user = [s for s in compile_.stack if not is_torch_file(s.file)]
        compile_.frame = user[-1] if user else (compile_.stack[-1] if compile_.stack else None)
        return
    if env.kind == "compilation_metrics":
        compile_.metrics = dict(env.metadata) if env.metadata else _json_object(env.text)
    elif env.kind == "dynamo_graph_break_reason" and env.text:
        compile_.graph_break_texts.append(env.text)
    elif env.kind == "recompile_reasons" and env.text:
        compile_.recompile_texts.extend(guard_failures(env.text))
    compile_.artifacts.append(Artifact(name=env.kind, log=compile_.log, offset=env.payload_offset,
                                       size=env.payload_size, encoding=env.encoding))


def _json_object(text: str | None) -> dict[str, object]:
    try:
        value = json.loads(text or "")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _source_line(frame: dict[str, object], strings: dict[int, str]) -> SourceLine:
    file = frame.get("uninterned_filename") or frame.get("filename")
    if isinstance(file, int):
        file = strings.get(file, f"<file {file}>")
    line = frame.get("line")
    return SourceLine(function=str(frame.get("name", "?")), file=str(file),
                      line=line if isinstance(line, int) else 0)


def _status(compile_: Compile, by_id: dict[CompileId, Compile]) -> str:
    """compiled, graph break, failed or restarted: what became of this compile id."""
    cid = compile_.id
    if compile_.metrics.get("fail_type"):
        return "failed"
    later = CompileId(cid.frame_id, cid.frame_compile_id, (cid.attempt or 0) + 1, cid.compiled_autograd_id)
    if later in by_id:  # the final attempt's metrics list the restarts before it: they are not its own
        return "restarted"
    earlier = [by_id.get(CompileId(cid.frame_id, cid.frame_compile_id, a, cid.compiled_autograd_id))
               for a in range(cid.attempt or 0)]
    if compile_.graph_break_texts or any(e is not None and e.graph_break_texts for e in earlier):
        return "graph break"
    return "compiled"


def _graph_breaks(compiles: list[Compile]) -> list[GraphBreak]:
    """Every graph break once, keyed by the user's file, line and torch's reason, with every compile that hit it."""
    found: dict[tuple[str, int, str], GraphBreak] = {}
    for compile_ in compiles:
        for text in compile_.graph_break_texts:
            read = read_graph_break(text)
            if read is None:
                continue
            entry = found.setdefault((read.file, read.line, read.reason), read)
            if (hit := (compile_.rank, str(compile_.id))) not in entry.hits:
                entry.hits.append(hit)
    return list(found.values())


def _recompiles(compiles: list[Compile]) -> list[Recompile]:
    return [Recompile(compile_id=c.id, rank=c.rank, guard_failures=list(c.recompile_texts),
                      reasons=[in_words(t) for t in c.recompile_texts])
            for c in compiles if c.recompile_texts]
