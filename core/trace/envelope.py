"""The structured log torch writes under `TORCH_TRACE` (`torch._logging.trace_structured`), line by line.

torch does not document the format; tlparse's `Envelope` (src/types.rs, src/lib.rs) is the de-facto spec. Each
record is one glog-prefixed line, `V1203 17:32:45.385000 25774 torch/_dynamo/utils.py:2350] {JSON}` (with
`[rankN]:` before it in some jobs), whose JSON names one kind of record (`dynamo_start`, `artifact`,
`compilation_metrics`, ...) beside the compile id keys (`frame_id`, `frame_compile_id`, `attempt`,
`compiled_autograd_id`) and `rank`. A record with `has_payload` (the payload's MD5) is followed by its payload,
each line indented by one tab. File names in stacks are interned: a `{"str": [path, id]}` record comes first.

This module only reads: JSON is parsed with `json.loads`, nothing in a trace is ever run or unpickled.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pt2_viewer.core.trace.model import CompileId

GLOG_PREFIX = re.compile(rb"(?:\[rank(\d+)\]:)?[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ [^\]\n]*\] ")
# What a log's first bytes look like (recognition reads 64: the prefix up to the thread id, before the record).
ENVELOPE_KEYS = frozenset({"frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank",
                           "has_payload", "stack"})
# Records read (their JSON read, their payloads checked) but not kept: the profiler's events and the fake tensors'
# descriptions (three records per input: 12,000 of a 10,000-node graph's log), most of a log's records.
SKIPPED = frozenset({"chromium_event", "describe_storage", "describe_tensor", "describe_source"})
# The records whose payload the reader needs as text while reading; every other payload stays in the log.
TEXT_KINDS = frozenset({"dynamo_graph_break_reason", "recompile_reasons", "compilation_metrics"})


class TraceError(Exception):
    """A file that is not a torch.compile trace, or cannot be read at all: one line for the user."""


@dataclass
class Envelope:
    """One record: its kind (`dynamo_start`, or an artifact's own name), its metadata, the compile id it belongs
    to and where its payload lies in the log."""

    kind: str
    metadata: dict[str, object]
    compile_id: CompileId | None
    rank: int | None
    line: int
    payload_offset: int = 0
    payload_size: int = 0
    encoding: str = "string"
    text: str | None = None
    stack: list[dict[str, object]] = field(default_factory=list)


@dataclass
class LogRead:
    """What one log held up to its end, or up to the first damaged line (`damage` says which and why)."""

    path: Path
    envelopes: list[Envelope]
    strings: dict[int, str]
    damage: str | None = None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def compile_id_of(record: dict[str, object]) -> CompileId | None:
    frame, compile_, autograd = (_int(record.get(k)) for k in ("frame_id", "frame_compile_id",
                                                                "compiled_autograd_id"))
    if frame is None and compile_ is None and autograd is None:
        return None
    return CompileId(frame, compile_, _int(record.get("attempt")) or 0, autograd)


def _envelope(record: dict[str, object], prefix_rank: int | None, line: int) -> Envelope:
    kinds = [k for k in record if k not in ENVELOPE_KEYS]
    kind = kinds[0] if kinds else "unknown"
    metadata = record.get(kind)
    metadata = metadata if isinstance(metadata, dict) else {}
    encoding = "string"
    if kind == "artifact":
        kind = str(metadata.get("name", "artifact"))
        encoding = str(metadata.get("encoding", "string"))
    rank = _int(record.get("rank"))
    stack = record.get("stack") if kind != "dynamo_start" else metadata.get("stack")
    return Envelope(kind=kind, metadata=metadata, compile_id=compile_id_of(record),
                    rank=rank if rank is not None else prefix_rank, line=line,
                    encoding=encoding, stack=[f for f in stack if isinstance(f, dict)] if isinstance(stack, list)
                    else [])


def read_log(path: Path) -> LogRead:
    """Every record of one log, in order, up to the first damaged line. Raises TraceError for a file that cannot
    be opened or whose first line is not a trace record."""
    try:
        handle = open(path, "rb")
    except OSError as e:
        raise TraceError(f"{path}: cannot read it ({e.strerror or e})") from None
    result = LogRead(path=path, envelopes=[], strings={})
    with handle:
        offset = 0
        lineno = 0
        current: Envelope | None = None
        expected_md5: str | None = None
        payload: list[bytes] = []

        def close_payload() -> str | None:
            """Check the finished payload against its MD5; None when it matches."""
            nonlocal current, expected_md5
            if current is None:
                return None
            env, md5 = current, expected_md5
            current, expected_md5 = None, None
            body = b"\n".join(payload)
            payload.clear()
            if md5 is not None and hashlib.md5(body).hexdigest() != md5:
                return f"the payload of line {env.line} ({env.kind}) is cut short or altered"
            if env.kind in TEXT_KINDS:
                env.text = body.decode("utf-8", errors="replace")
            if env.kind not in SKIPPED:
                result.envelopes.append(env)
            return None

        for raw in handle:
            lineno += 1
            start, offset = offset, offset + len(raw)
            line = raw.rstrip(b"\r\n")
            if line.startswith(b"\t") and current is not None:
                if not payload:
                    current.payload_offset = start
                payload.append(line[1:])
                current.payload_size = offset - current.payload_offset
                continue
            problem = close_payload()
            if problem:
                result.damage = problem
                return result
            if not line.strip():
                continue  # a stuttered blank line: never a record (tlparse skips them too)
            read = _read_record(line, lineno, start, result)
            if isinstance(read, str):
                if not result.envelopes and not result.strings:
                    raise TraceError(f"{path}: not a torch.compile trace (line {lineno}: {read}); "
                                     "give a TORCH_TRACE folder or one of its .log files")
                result.damage = f"line {lineno} is damaged ({read})"
                return result
            if read is not None:
                current, expected_md5 = read
        problem = close_payload()
        if problem:
            result.damage = problem
    return result


def _read_record(line: bytes, lineno: int, start: int, result: LogRead) -> str | tuple[Envelope, str] | None:
    """Read one record line into `result`; a string says why it is not a record; a pair is a record whose payload
    follows (with the MD5 it should have)."""
    if line.startswith(b"\t"):
        return "a payload line with no record before it"
    match = GLOG_PREFIX.match(line)
    if match is None:
        return "no log prefix"
    try:
        record = json.loads(line[match.end():])
    except (ValueError, UnicodeDecodeError) as e:
        return f"its JSON does not read: {e}"
    if not isinstance(record, dict):
        return "its JSON is not an object"
    interned = record.get("str")
    if isinstance(interned, list) and len(interned) == 2 and isinstance(interned[1], int):
        result.strings[interned[1]] = str(interned[0])
        return None
    md5 = record.get("has_payload")
    if not isinstance(md5, str) and next((k for k in record if k not in ENVELOPE_KEYS), None) in SKIPPED:
        return None  # read, not kept: no record of it is made
    env = _envelope(record, int(match.group(1)) if match.group(1) else None, lineno)
    if isinstance(md5, str):
        env.payload_offset = start + len(line) + 1
        return env, md5
    if env.kind not in SKIPPED:
        result.envelopes.append(env)
    return None
