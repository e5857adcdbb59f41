"""A ~100k-node `.pt2` in seconds: bench/big_model.py's 135-layer program (torch's own export) with its graph tiled.

Exporting 1,370 layers takes the better part of an hour on a 2-core machine, so `tiled_path(copies)` builds the big
program from the 135-layer archive instead: copy 0 is torch's graph as saved; copies 1.. repeat every call node under
new names (`NAME_tC`), reading the same inputs and weights, their module paths under `tileC.` (so the first view
shows one group per copy, as a deeper model shows its layers). The JSON is torch's schema, node for node (the reader
and the window cannot tell), and about as large per node as a real export. Cached under `.cache/big-programs/`.
"""
from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from big_model import CACHE, program_path  # noqa: E402

from pt2_viewer.core.util.files import write_atomically  # noqa: E402


def tiled_path(copies: int, layers: int = 135) -> Path:
    """The cached archive of `copies` tiles of the `layers`-deep program (~73 nodes a layer)."""
    source = program_path(layers)
    path = CACHE / source.parent.name / f"tiled{layers}x{copies}.pt2"
    if not path.exists():
        write_atomically(path, lambda tmp: _write(source, Path(tmp), copies))
    return path


def _write(source: Path, target: Path, copies: int) -> None:
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/models/model.json"):
                data = json.dumps(_tiled(json.loads(data), copies)).encode()
            dst.writestr(info.filename, data)


def _tiled(doc: dict[str, Any], copies: int) -> dict[str, Any]:
    graph = doc["graph_module"]["graph"]
    nodes = list(graph["nodes"])  # copy 0, as torch saved it
    produced = {o["as_tensor"]["name"] for n in nodes for o in n["outputs"] if "as_tensor" in o}
    produced |= {n["name"] for n in nodes}
    produced |= {o["as_sym_int"]["as_name"] for n in nodes for o in n["outputs"]
                 if isinstance(o.get("as_sym_int"), dict) and "as_name" in o["as_sym_int"]}
    tables = {t: {k: v for k, v in graph.get(t, {}).items() if k in produced}
              for t in ("tensor_values", "sym_int_values")}
    for c in range(1, copies):
        def rename(x: Any, c: int = c) -> Any:
            if isinstance(x, dict):
                return {k: (f"{v}_t{c}" if k in ("name", "as_name") and isinstance(v, str) and v in produced
                            else _module_stack(v, c) if k == "nn_module_stack" and isinstance(v, str)
                            else rename(v)) for k, v in x.items()}
            if isinstance(x, list):
                return [rename(v) for v in x]
            return x

        graph["nodes"].extend(rename(n) for n in nodes)
        for table, values in tables.items():
            graph.setdefault(table, {}).update({f"{k}_t{c}": v for k, v in values.items()})
    return doc


def _module_stack(text: str, c: int) -> str:
    """`key,path,type;...` with every module path moved under `tileC`."""
    entries = []
    for entry in text.split(";"):
        parts = entry.split(",", 2)
        if len(parts) == 3 and parts[1]:
            parts[1] = f"tile{c}.{parts[1]}"
        entries.append(",".join(parts))
    return ";".join(entries)


if __name__ == "__main__":
    print(tiled_path(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
