"""What, besides a request, decides a layout: part of every layout cache key, found without importing pygraphviz.

Importing pygraphviz loads its C extension and the Graphviz libraries linked to it (8 ms of CPU in the window's
process, on a reopen whose every layout comes from the cache). The Graphviz version pygraphviz reports is compiled
into that extension, so the extension file, with the package's own `__init__.py`, identifies the engine: the id is
the layout settings' version (engine.py) and those files' names, sizes and modification times. A pygraphviz that
cannot be found so (no such files) is asked for its versions instead.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os

# Bump when the layout attributes in engine.py change, so that cached layouts made with the old ones are not reused.
ENGINE_VERSION = 2


def engine_id() -> str:
    files = _pygraphviz_files()
    if files:
        return f"engine{ENGINE_VERSION}/pygraphviz/" + "/".join(files)
    import pygraphviz  # deferred: only for a pygraphviz not found by its files

    return f"engine{ENGINE_VERSION}/pygraphviz{pygraphviz.__version__}/graphviz{pygraphviz.__graphviz_version__}"


def _pygraphviz_files() -> list[str]:
    """`name:size:mtime_ns` of pygraphviz's `__init__.py` and its `_graphviz` extension; [] when either is missing."""
    try:
        spec = importlib.util.find_spec("pygraphviz")
    except (ImportError, ValueError):
        return []
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        return []
    out = []
    try:
        for entry in sorted(os.scandir(folders[0]), key=lambda e: e.name):
            if entry.name == "__init__.py" or (entry.name.startswith("_graphviz")
                                               and entry.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))):
                st = entry.stat()
                out.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return []
    return out if len(out) >= 2 and any(n.startswith("_graphviz") for n in out) else []
