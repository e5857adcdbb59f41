"""ETRecords, checked before ExecuTorch loads them, as a `.pt2` is before torch does.

An ETRecord (`executorch.devtools.etrecord`) is a zip of exported programs (the source, its edge dialect, graphs of
the lowering) in torch's serialized form, their weights, constants and example inputs as `torch.save` pickles, and
JSON maps (debug handles, delegates). `parse_etrecord` loads those pickles with torch's `deserialize_torch_artifact`,
which falls back to a full unpickle (running any `__reduce__`) when the weights-only unpickler refuses one, and
evaluates the programs' symbolic sizes. So the worker first reads the zip itself:
- refused whatever the user says: not a zip, no `ETRECORD_V0` identifier, too many members, member names pointing
  outside the archive or repeated, a member that inflates out of proportion, JSON nested absurdly deep, symbol
  ranges that are not numbers;
- code it would run, refused unless the user trusts the file (`trust`, kind `untrusted` with its consent items as
  for a `.pt2`): a pickle the weights-only unpickler refuses, a size expression outside the grammar torch writes.
The bytes checked are the bytes loaded: the file is read once, and ExecuTorch parses a private copy of them.
"""
from __future__ import annotations

import io
import json
import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.archive_check import (
    MAX_JSON_DEPTH,
    MAX_MEMBERS,
    MAX_PICKLE_BYTES,
    MAX_RATIO,
    RATIO_FLOOR,
    ArchiveCheck,
    require_trust,
    weights_only_problem,
)
from pt2_viewer.core.jobs.archive_check import _check_program as check_program_json  # the .pt2 check of a program
from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.pt2.errors import ArchiveError

IDENTIFIER = "ETRECORD_V0"
JSON_MAPS = ("debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map", "export_graph_id")
PICKLED = ("reference_outputs", "representative_inputs")
PICKLE_SUFFIXES = ("_state_dict", "_constants", "_example_inputs")
MAX_ETRECORD_BYTES = 1 << 34
HINT = "Make the ETRecord again (pt2-viewer lower, or generate_etrecord=True), or copy it again."


def _printable(text: str, limit: int = 80) -> str:
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def check_etrecord_bytes(data: bytes, path: Path) -> ArchiveCheck:
    """What in the ETRecord `data` would run code (`code`), or `JobFailure` (kind `load`) for a file no one should
    load."""
    name = path.name
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, EOFError, ValueError):
        raise JobFailure("load", f"'{name}' is not an ETRecord: it is not a valid zip file.", HINT) from None
    try:
        return _check(zf, path)
    except ArchiveError as e:
        raise JobFailure("load", str(e), HINT) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as e:  # a damaged member
        raise JobFailure("load", f"'{name}' is damaged: {e}.", HINT) from None
    finally:
        zf.close()


def _check(zf: zipfile.ZipFile, path: Path) -> ArchiveCheck:
    name = path.name
    infos = [i for i in zf.infolist() if not i.is_dir()]
    if len(infos) > MAX_MEMBERS:
        raise ArchiveError(f"'{name}' has {len(infos):,} members, more than an ETRecord could need: it is damaged.")
    seen: set[str] = set()
    for info in infos:
        parts = info.filename.replace("\\", "/").split("/")
        if info.filename.startswith("/") or ".." in parts or "\x00" in info.filename:
            raise ArchiveError(f"'{name}' has a member named '{_printable(info.filename)}', which points outside "
                               "the archive: it was not written by ExecuTorch.")
        if info.filename.lower() in seen:
            raise ArchiveError(f"'{name}' holds the member '{_printable(info.filename)}' more than once: ExecuTorch "
                               "could load another copy than the one checked.")
        seen.add(info.filename.lower())
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ArchiveError(f"In '{name}', the member '{_printable(info.filename)}' inflates from "
                               f"{info.compress_size:,} to {info.file_size:,} bytes: a zip bomb, or a damaged file.")
    names = [i.filename for i in infos]
    if IDENTIFIER not in names:
        raise ArchiveError(f"'{name}' is not an ETRecord: it has no {IDENTIFIER} member (an ETRecord is written by "
                           "ExecuTorch's generate_etrecord).")
    programs = [n for n in names if n != IDENTIFIER and n not in JSON_MAPS and n not in PICKLED
                and not n.endswith(PICKLE_SUFFIXES)]
    check = ArchiveCheck(path=path, root="", models=programs)
    for member in programs:
        doc = _json(zf, member, name)
        check_program_json(check, member, _unbounded_as_null(doc))
    for member in JSON_MAPS:
        if member in names:
            _json(zf, member, name)
    for member in names:
        if member in PICKLED or member.endswith(PICKLE_SUFFIXES):
            problem = weights_only_problem(zf.read(member)[:MAX_PICKLE_BYTES])
            if problem:
                check.code.append(f"unpickle {member}, {problem}")
    return check


def _unbounded_as_null(doc: Any) -> Any:
    """The program with an unbounded symbol's range as a `.pt2` writes it (null): ExecuTorch's ETRecord serializer
    writes `Infinity` there (a dynamic batch without an upper bound), which the `.pt2` check takes for damage."""
    ranges = doc.get("range_constraints") if isinstance(doc, dict) else None
    if not isinstance(ranges, dict):
        return doc
    fixed = {symbol: {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in r.items()}
             if isinstance(r, dict) else r for symbol, r in ranges.items()}
    return {**doc, "range_constraints": fixed}


def _json(zf: zipfile.ZipFile, member: str, name: str) -> Any:
    try:
        doc = json.loads(zf.read(member))
    except (ValueError, RecursionError):
        raise ArchiveError(f"In '{name}', the member '{_printable(member)}' is not JSON (or is nested more than "
                           f"{MAX_JSON_DEPTH} levels deep): the file is damaged.") from None
    return doc


def load_etrecord(path: str | Path, work: Path, trusted: bool = False, allowed: list[str] | None = None) -> Any:
    """The checked ETRecord at `path`, parsed by ExecuTorch from a private copy in `work` (the job's folder)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_ETRECORD_BYTES + 1)
    except OSError as e:
        raise JobFailure("load", f"'{path}' cannot be read: {e.strerror or e}.", "Check the path.") from None
    if len(data) > MAX_ETRECORD_BYTES:
        raise JobFailure("load", f"'{path.name}' is larger than an ETRecord this viewer reads.", HINT)
    check = check_etrecord_bytes(data, path)
    require_trust(check, trusted, allowed or [])
    from executorch.devtools.etrecord import parse_etrecord

    work.mkdir(parents=True, exist_ok=True)
    copy = work / "checked.etrecord"
    copy.write_bytes(data)
    try:
        return parse_etrecord(str(copy))
    except Exception as e:  # ExecuTorch's and torch's deserializers have no common error type
        raise JobFailure("load", f"ExecuTorch could not read the ETRecord '{path.name}': {type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''}", HINT) from e
    finally:
        copy.unlink(missing_ok=True)
