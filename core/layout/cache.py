"""Disk cache of finished layouts, so reopening a program shows its graph at once.

An entry is keyed by the sha256 of the request's shape (`LayoutRequest.shape`: node sizes and shapes in order, edges
by node position, rankdir; not the node ids, not the key_hint) plus the engine's identity (engine settings version
and pygraphviz's files: core/layout/engine_id.py), and holds the LayoutResult as JSON with its nodes named by
position, so a model's repeated layers share one entry. Entries are written atomically (write_atomically); an
entry that cannot be read, does not parse, or does not fit its request is treated as missing. Location:
`$PT2V_CACHE_DIR/layout` when that variable is set (tests point it at a temporary folder), else
`$XDG_CACHE_HOME/pt2-viewer/layout`, else `~/.cache/pt2-viewer/layout`.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pt2_viewer.core.layout.engine_id import engine_id
from pt2_viewer.core.layout.records import LayoutRequest, LayoutResult, dumps
from pt2_viewer.core.pt2.parsed_cache import cache_root
from pt2_viewer.core.util.files import write_atomically


def default_cache_dir() -> Path:
    return cache_root() / "layout"


class LayoutCache:
    """Read and write cached layouts in one folder. Safe to share between processes (writes are atomic)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, engine: str | None = None) -> None:
        self.directory = (Path(directory) if directory is not None else default_cache_dir()).absolute()
        self._engine = engine  # looked up on first use (core/layout/engine_id.py)

    @property
    def engine(self) -> str:
        if self._engine is None:
            self._engine = engine_id()
        return self._engine

    def key(self, request: LayoutRequest) -> str:
        return self.shape_key(dumps(request.shape()))

    def shape_key(self, shape_text: str) -> str:
        """The key of a request's shape, given as `dumps(request.shape())`: equal to `key(request)`."""
        text = f"[{dumps(self.engine)},{shape_text}]"  # dumps([engine, shape]), without encoding the shape again
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, request: LayoutRequest) -> LayoutResult | None:
        """The cached layout of `request` (or of any request of its shape), or None when there is none (or it is
        unreadable)."""
        shaped = self.get_shaped(self.key(request), len(request.nodes), len(request.edges))
        return None if shaped is None else shaped.named_for(request)

    def get_shaped(self, key: str, nodes: int, edges: int) -> LayoutResult | None:
        """The entry under `key` with its nodes named by position, or None when it is missing, unreadable, or not a
        layout of `nodes` nodes and `edges` edges (then it is corrupt: treated as missing, overwritten later)."""
        try:
            result = LayoutResult.from_json(self.path(key).read_bytes())
        except (OSError, ValueError):  # missing, unreadable, not JSON, or not a LayoutResult
            return None
        return result if result.fits(nodes, edges) else None

    def put(self, request: LayoutRequest, result: LayoutResult) -> bool:
        """Store `result` for `request`'s shape; False (and no exception) when the disk refuses: a cache is
        optional."""
        target = self.path(self.key(request))
        try:
            write_atomically(target, result.shaped(request).to_json())
        except OSError:
            return False
        return True
