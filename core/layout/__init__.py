"""Graph layout by Graphviz `dot`, computed in a child process so the GUI never freezes (see docs/layout.md).

The GUI uses LayoutService (one long-lived child, a ticket queue, a disk cache); headless code and tests may call
`pt2_viewer.core.layout.engine.layout` directly, which runs Graphviz in the calling process. Importing this package does
not import pygraphviz.
"""
from pt2_viewer.core.layout.cache import LayoutCache, default_cache_dir
from pt2_viewer.core.layout.records import EdgeRoute, LayoutEdge, LayoutError, LayoutNode, LayoutRequest, LayoutResult
from pt2_viewer.core.layout.service import LayoutService

__all__ = [
    "EdgeRoute",
    "LayoutCache",
    "LayoutEdge",
    "LayoutError",
    "LayoutNode",
    "LayoutRequest",
    "LayoutResult",
    "LayoutService",
    "default_cache_dir",
]
