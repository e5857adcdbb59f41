"""The one map from a program's nodes to the `.pte` nodes computing them, read from the ETRecord's debug handles.

ExecuTorch gives every op of the edge program a debug handle and records, per method, which handles each `.pte`
instruction runs (`debug_handle_map`); each edge node's `from_node` chain names the node of the program that was
lowered (`exported_program`, whose graph id is `export_graph_id`) it came from. So, reading only the ETRecord's JSON
members (nothing is unpickled, no torch): `source node -> .pte nodes` (`etrecord_source_to_pte`). It is what
ExecuTorch's Inspector finds when it propagates the handles back onto the source (`propagate_back_debug_handle`,
checked against it in tests/core/deploy/test_handle_map.py), without the minute the Inspector takes to load a
transformer's ETRecord.

Every view that pairs a program with its `.pte` uses this map: the lower job's result (`source_to_pte`), the lowering
view beside the source (core/deploy/delegation.py), `diff --etrecord` and the pipeline chain (core/diff/handles.py).
Their links are of the method `debug_handle`, which the structural diff trusts as it trusts torch's `from_node`.
"""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

from pt2_viewer.core.model.program import Program

DEBUG_HANDLE = "debug_handle"  # the links' method: matched through the ETRecord's debug handles
MAX_MEMBER_BYTES = 1 << 30  # a JSON member larger than this is not an ETRecord's
EDGE_PREFIX = "edge_dialect_exported_program"


class EtrecordError(ValueError):
    """An ETRecord this module cannot read; the message names the file and the problem."""


def _json(zf: zipfile.ZipFile, member: str, path: Path) -> Any:
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise EtrecordError(f"{path}: the ETRecord has no '{member}' member (write it with generate_etrecord=True, "
                            "or pt2-viewer lower)") from None
    if info.file_size > MAX_MEMBER_BYTES:
        raise EtrecordError(f"{path}: the member '{member}' is too large for an ETRecord")
    try:
        return json.loads(zf.read(member))
    except (ValueError, RecursionError, zipfile.BadZipFile, OSError) as e:
        raise EtrecordError(f"{path}: the member '{member}' is damaged ({type(e).__name__})") from None


def handles_of(value: Any) -> list[int]:
    """A node's or an instruction's debug handles: an int, a list, or the text the serializer writes ("3", "(3, 4)")."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)):
        return [h for v in value for h in handles_of(v)]
    if isinstance(value, str):
        return [int(t) for t in re.findall(r"\d+", value)]
    return []


def _sources(chain: Any, graph_id: Any) -> list[str]:
    """The names, along a `from_node` chain (a list of `{name, graph_id, from_node}`), of the nodes of graph
    `graph_id`: the program that was lowered."""
    out: list[str] = []
    level = chain if isinstance(chain, list) else []
    for _ in range(64):  # bounded: a chain is as deep as the passes that made the node
        nxt: list[Any] = []
        for src in level:
            if not isinstance(src, dict):
                continue
            name = src.get("name")
            if src.get("graph_id") == graph_id and isinstance(name, str) and name not in out:
                out.append(name)
            nxt.extend(src.get("from_node") or [])
        if not nxt:
            break
        level = nxt
    return out


def etrecord_source_to_pte(path: str | Path, pte: Program) -> dict[str, list[str]]:
    """Source node -> the `.pte` nodes (of the method `pte` shows) computing it, read from the ETRecord at `path`;
    `EtrecordError` names the file and the problem."""
    path = Path(path)
    method = pte.name or "forward"
    try:
        with zipfile.ZipFile(path) as zf:
            handle_map = _json(zf, "debug_handle_map", path)
            graph_id = _json(zf, "export_graph_id", path)
            edge_member = f"{EDGE_PREFIX}/{method}"
            if edge_member not in zf.namelist():
                edge_member = EDGE_PREFIX if EDGE_PREFIX in zf.namelist() else edge_member
            edge = _json(zf, edge_member, path)
    except FileNotFoundError:
        raise EtrecordError(f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError):
        raise EtrecordError(f"{path}: not an ETRecord (not a zip file)") from None
    by_handle: dict[int, list[str]] = {}
    nodes = ((edge.get("graph_module") or {}).get("graph") or {}).get("nodes") if isinstance(edge, dict) else None
    for node in nodes or []:
        meta = node.get("metadata") or {} if isinstance(node, dict) else {}
        try:
            chain = json.loads(meta.get("from_node") or "[]")
        except (ValueError, RecursionError, TypeError):
            continue
        for h in handles_of(meta.get("debug_handle")):
            for source in _sources(chain, graph_id):
                if source not in by_handle.setdefault(h, []):
                    by_handle[h].append(source)
    names = {int(n.metadata["instruction"]): n.name for n in pte.graph.nodes if "instruction" in n.metadata}
    instructions = handle_map.get(method) if isinstance(handle_map, dict) else None
    out: dict[str, list[str]] = {}
    for instruction, handles in (instructions or {}).items():
        node = names.get(int(instruction)) if str(instruction).isdigit() else None
        if node is None:
            continue
        for h in handles_of(handles):
            for source in by_handle.get(h, []):
                if node not in out.setdefault(source, []):
                    out[source].append(node)
    return out
