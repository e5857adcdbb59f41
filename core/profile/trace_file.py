"""Read a Chrome-style trace JSON as `torch.profiler` exports it (`prof.export_chrome_trace(path)`, plain or `.gz`),
or as ONNX Runtime writes its profile (`SessionOptions.enable_profiling`: a bare array of events, read on by
core/profile/onnx_runtime.py).

A trace is a file from anywhere, so reading it is bounded: a file (or its gzip's content) over `MAX_TRACE_BYTES` is
refused before it is read whole, JSON nested deeper than the decoder's recursion limit (about 1,000 levels; torch
writes 4) is refused, and the JSON is decoded by msgspec into typed structs: no code in it is ever run, nothing is
unpickled. Every refusal is one line (`ProfileError`)."""
from __future__ import annotations

import gzip
import os
import zlib
from typing import Any

import msgspec

from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import ProfileTrace, TraceEvent

MAX_TRACE_BYTES = 2 * 1024**3  # 2 GiB of JSON: a profile of many steps of a large model stays well under this
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_MAX_ARG_CHARS = 200  # what an event keeps of a string argument (an op or provider name) a hostile file may make huge


class _Event(msgspec.Struct):
    """One trace event as the file holds it; fields torch does not write for an event kind take their defaults."""

    name: str = ""
    ph: str = ""
    cat: str = ""
    ts: float = 0.0
    dur: float = 0.0
    pid: int | str = 0
    tid: int | str = 0
    args: dict[str, Any] = {}


class _TraceObject(msgspec.Struct):
    traceEvents: list[_Event] = []  # noqa: N815 (the format's own name)


def read_trace(path: str | os.PathLike[str]) -> ProfileTrace:
    """The complete events of the trace at `path`; `ProfileError` with a one-line reason for anything else."""
    data = _bounded_bytes(str(path))
    events = _decode(str(path), data)
    return ProfileTrace(str(path), [_event(e) for e in events if e.ph == "X"])


def _bounded_bytes(path: str) -> bytes:
    try:
        size = os.stat(path).st_size
        if os.path.isdir(path):
            raise ProfileError(f"{path}: is a folder; give the .json file torch.profiler's export_chrome_trace wrote")
        if size > MAX_TRACE_BYTES:
            raise ProfileError(f"{path}: {size:,} bytes is over the {_limit()} a trace may be; export a shorter "
                               "profile (fewer steps: torch.profiler.schedule)")
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(0)
            if head == GZIP_MAGIC:
                return _gunzip_bounded(path, f)
            return f.read(MAX_TRACE_BYTES + 1)
    except FileNotFoundError:
        raise ProfileError(f"{path}: no such file") from None
    except OSError as e:
        raise ProfileError(f"{path}: cannot read it ({e.strerror or e})") from None


def _gunzip_bounded(path: str, f: Any) -> bytes:
    """A gzip's content, read in chunks and refused as soon as it passes the limit (whatever its header says)."""
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=f) as z:
            while chunk := z.read(_CHUNK):
                out += chunk
                if len(out) > MAX_TRACE_BYTES:
                    raise ProfileError(f"{path}: unpacks to over the {_limit()} a trace may be; export a shorter "
                                       "profile")
    except (OSError, EOFError, zlib.error) as e:
        raise ProfileError(f"{path}: a damaged gzip file ({e}); export the trace again") from None
    return bytes(out)


def _limit() -> str:
    return f"{MAX_TRACE_BYTES / 1024**3:g} GiB"


def _decode(path: str, data: bytes) -> list[_Event]:
    if not data.strip():
        raise ProfileError(f"{path}: is empty; give the .json file torch.profiler's export_chrome_trace wrote")
    try:
        if data.lstrip()[:1] == b"[":  # Chrome's other form: a bare array of events
            return msgspec.json.decode(data, type=list[_Event])
        return msgspec.json.decode(data, type=_TraceObject).traceEvents
    except RecursionError:
        raise ProfileError(f"{path}: JSON nested deeper than a trace can be; this is not a profiler trace") from None
    except msgspec.ValidationError as e:
        raise ProfileError(f"{path}: not a Chrome trace as torch.profiler writes it ({e})") from None
    except msgspec.DecodeError as e:
        what = "cut short" if "truncated" in str(e).lower() else "not valid JSON"
        raise ProfileError(f"{path}: {what} ({e}); export the trace again with export_chrome_trace") from None


def _int_arg(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_arg(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    return value[:_MAX_ARG_CHARS] if isinstance(value, str) else ""


def _event(e: _Event) -> TraceEvent:
    return TraceEvent(name=e.name, category=e.cat, ts=e.ts, dur=max(e.dur, 0.0), pid=e.pid, tid=e.tid,
                      correlation=_int_arg(e.args, "correlation"), external_id=_int_arg(e.args, "External id"),
                      device=_int_arg(e.args, "device"), op_name=_str_arg(e.args, "op_name"),
                      provider=_str_arg(e.args, "provider"))
