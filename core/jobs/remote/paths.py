"""Which request fields hold local paths, and their rewriting both ways for a job on another machine.

Going out, each input file becomes a link in the server's job folder to its cached copy (by hash, named as here: a
program keeps its file name, a script keeps its folder around it), each output file goes into a folder of the
remote job that stands for its local folder, and the job's own folder (`out_dir`) is `JOB/out`. The request names
them with the `JOB_TOKEN` prefix, which the agent replaces with the job folder's real path. Coming back, every
string in the events and the pulled JSON files (result.json, report.json, mappings) that starts with a remote folder
is turned into the local path it stands for, so a result reads as if the job had run here.

Which fields hold paths is the request schemas' to say (`local_path` in core/jobs/schemas/): an input file goes
alone (a `.pt2`, a `.pte`), a `.py` file goes with its folder; the job's kind names those that are files it writes
(`JobKind.outputs`, core/jobs/kinds.py).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.kinds import JobKind
from pt2_viewer.core.jobs.remote.content import file_digest, folder_files

JOB_TOKEN = "@PT2V_JOB@"
OUT = "out"



@dataclass(frozen=True)
class Link:
    digest: str
    rel: str  # path inside the remote job folder
    local: Path
    size: int


@dataclass
class Plan:
    """A job's request as the server sees it, the files it needs there, and the folders that come back."""

    request: dict[str, Any]
    links: list[Link] = field(default_factory=list)
    outputs: dict[str, Path] = field(default_factory=dict)  # remote folder (relative) -> local folder
    inputs: dict[str, Path] = field(default_factory=dict)  # remote file (relative) -> local file
    folders: dict[str, Path] = field(default_factory=dict)  # a script's remote folder (relative) -> its local one

    def spec_links(self) -> list[dict[str, str]]:
        return [{"hash": link.digest, "path": link.rel} for link in self.links]

    def pulled(self) -> list[str]:
        return [OUT, *self.outputs]


def plan(kind: JobKind[Any, Any], request: dict[str, Any], out_dir: Path, cap_bytes: int | None = None,
         on_hash: Callable[[Path, int], None] | None = None) -> Plan:
    """Rewrite `request` for the server and list the files it needs there (hashing them, from the cache when known).
    `request` is the job's request as JSON, the form it crosses to the server in: the local paths its schema marks
    (`JobKind.path_fields`) are read and rewritten here, at that boundary, by key."""
    inputs, outputs = kind.path_fields()
    remote = dict(request)
    result = Plan(remote)
    seen: dict[Path, str] = {}

    def add(local: Path, rel: str) -> str:
        local = local.resolve()
        if local in seen:
            return seen[local]
        size = local.stat().st_size
        if on_hash is not None:
            on_hash(local, size)
        result.links.append(Link(file_digest(local), rel, local, size))
        result.inputs[rel] = local
        seen[local] = rel
        return rel

    for n, key in enumerate(inputs):
        value = request.get(key)
        if not isinstance(value, str) or not value:
            continue
        local = Path(value).expanduser().resolve()
        if not local.is_file():
            continue  # a word ("core"), or a file the job says is missing, in its own words
        base = f"in/{n}"
        if local.suffix == ".py":  # a script goes with its folder: the files it imports or reads beside it
            files = folder_files(local, cap_bytes) if cap_bytes is not None else folder_files(local)
            for path in files:
                add(path, f"{base}/{path.relative_to(local.parent).as_posix()}")
            result.folders[base] = local.parent
        remote[key] = f"{JOB_TOKEN}/" + add(local, f"{base}/{local.name}")
    for n, key in enumerate(outputs):
        value = request.get(key)
        if isinstance(value, str) and value:
            local = Path(value).expanduser().resolve()
            folder = f"o{n}"
            result.outputs[folder] = local.parent
            remote[key] = f"{JOB_TOKEN}/{folder}/{local.name}"
    return result


class PathMap:
    """Remote paths of one job back to local ones: longest prefix first; other strings are left as they are."""

    def __init__(self, job_dir: str, plan: Plan, out_dir: Path) -> None:
        pairs: list[tuple[str, str]] = [(f"{job_dir}/{OUT}", str(out_dir))]
        pairs += [(f"{job_dir}/{rel}", str(local)) for rel, local in plan.outputs.items()]
        pairs += [(f"{job_dir}/{rel}", str(local)) for rel, local in plan.inputs.items()]
        pairs += [(f"{job_dir}/{rel}", str(local)) for rel, local in plan.folders.items()]
        self.pairs = sorted(pairs, key=lambda p: -len(p[0]))

    def text(self, value: str) -> str:
        for remote, local in self.pairs:
            if value == remote or value.startswith(remote + "/"):
                return local + value[len(remote):]
            if remote in value:  # a path inside a message: "cannot read /scratch/jobs/7/in/..."
                value = value.replace(remote, local)
        return value

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        return value


def local_target(rel: str, plan: Plan, out_dir: Path) -> Path | None:
    """Where a pulled file (its name in the tar) goes here; None for a name outside the folders that come back."""
    parts = rel.split("/")
    if not parts or any(p in ("", ".", "..") for p in parts) or os.path.isabs(rel) or len(parts) < 2:
        return None
    folders = {OUT: out_dir, **plan.outputs}
    base = folders.get(parts[0])
    return base.joinpath(*parts[1:]) if base is not None else None
