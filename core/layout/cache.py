"""Disk cache of finished layouts, so reopening a program shows its graph at once.

An entry is keyed by the sha256 of the request's canonical content (nodes, sizes, shapes, edges, rankdir; not its
key_hint) plus the engine's identity (engine settings version, pygraphviz and Graphviz versions), and holds the
LayoutResult as JSON. Entries are written atomically (write_atomically); an entry that cannot be read, does not
parse, or does not fit its request is treated as missing. Location: `$PT2V_CACHE_DIR/layout` when that variable is
set (tests point it at a temporary folder), else `$XDG_CACHE_HOME/pt2-viewer/layout`, else
`~/.cache/pt2-viewer/layout`.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pt2_viewer.core.layout.records import LayoutRequest, LayoutResult, dumps
from pt2_viewer.core.pt2.parsed_cache import cache_root
from pt2_viewer.core.util.files import write_atomically


def default_cache_dir() -> Path:
    return cache_root() / "layout"


class LayoutCache:
    """Read and write cached layouts in one folder. Safe to share between processes (writes are atomic)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, engine: str | None = None) -> None:
        self.directory = (Path(directory) if directory is not None else default_cache_dir()).absolute()
        # The engine id imports pygraphviz, so it is looked up on first use (off the GUI thread in LayoutService).
        self._engine = engine

    @property
    def engine(self) -> str:
        if self._engine is None:
            from pt2_viewer.core.layout.engine import engine_id  # deferred: pygraphviz

            self._engine = engine_id()
        return self._engine

    def key(self, request: LayoutRequest) -> str:
        text = dumps([self.engine, request.content()])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, request: LayoutRequest) -> LayoutResult | None:
        """The cached layout of `request`, or None when there is none (or it is unreadable)."""
        try:
            result = LayoutResult.from_json(self.path(self.key(request)).read_bytes())
        except (OSError, ValueError):  # missing, unreadable, not JSON, or not a LayoutResult
            return None
        if set(result.positions) != {n.id for n in request.nodes} or len(result.edges) != len(request.edges):
            return None  # does not describe this request: treat as corrupt
        return result

    def put(self, request: LayoutRequest, result: LayoutResult) -> bool:
        """Store `result` for `request`; False (and no exception) when the disk refuses: a cache is optional."""
        target = self.path(self.key(request))
        try:
            write_atomically(target, result.to_json())
        except OSError:
            return False
        return True
