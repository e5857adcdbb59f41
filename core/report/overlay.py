"""An overlay for the report's graph: the numerics error overlay (a `pt2-viewer numerics --json` result) or the
user's own `{node_name: value}` JSON, both as the window paints them (core/numerics/readout.py,
core/graph/overlays.py), turned into the page's data."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.graph.overlays import Overlay, OverlayFileError, overlay_from_json, read_overlay_json
from pt2_viewer.core.jobs.schemas.base import SchemaError
from pt2_viewer.core.jobs.schemas.numerics import NumericsResult
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.numerics.readout import error_overlay, summary_text


def read_overlay(path: str | Path, program: Program) -> Overlay:
    """The overlay a file holds; OverlayFileError (one line) when it holds none."""
    p = Path(path)
    data = read_overlay_json(p)
    if isinstance(data, dict) and "per_node" in data and "nodes" in data:  # a numerics result
        try:
            result = NumericsResult.from_json(data)
        except SchemaError as e:
            raise OverlayFileError(f"{p.name} is not a numerics result this PT2 Viewer reads: {e}") from None
        overlay = error_overlay(result)
        if overlay is None:
            raise OverlayFileError(f"{p.name} is a numerics result with no per-node errors (outputs only, or failed)")
        overlay.notes.insert(0, summary_text(result))
        return overlay
    return overlay_from_json(data, p, program.graph)


def overlay_data(overlay: Overlay) -> dict[str, Any]:
    """JSON-ready: a scale's levels (0..1) or categories with their legend labels, tooltips and notes."""
    return {"name": overlay.name, "levels": {k: round(v, 4) for k, v in overlay.levels.items()},
            "categories": dict(overlay.categories), "legend": [item.label for item in overlay.legend],
            "texts": dict(overlay.texts), "notes": list(overlay.notes)}
