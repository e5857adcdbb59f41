"""The source painted by what `lower --to onnx` made of each op: became ONNX nodes, fused (by which rewrite rule,
into which nodes), or dropped; the words in the tooltip and in Details, as the Delegation overlay says a lowering to
ExecuTorch (core/deploy/delegation.py). Torch-free: the window paints it from the job's result."""
from __future__ import annotations

from pt2_viewer.core.graph.overlays import Overlay, category_overlay
from pt2_viewer.core.graph.palette import MUTED
from pt2_viewer.core.jobs.schemas.onnx_lower import BECAME, DROPPED, FUSED, OnnxLowerResult

OVERLAY = "ONNX"
CATEGORIES = {"became ONNX nodes": 0, "fused": 6, "dropped": MUTED}  # blue, purple, the muted slate
_WORDS = {BECAME: "became ONNX nodes", FUSED: "fused", DROPPED: "dropped"}


def fate_overlay(result: OnnxLowerResult) -> Overlay:
    rows = result.nodes or []
    overlay = category_overlay(OVERLAY, {r.node: _WORDS[r.fate] for r in rows if r.fate in _WORDS}, fixed=CATEGORIES)
    for r in rows:
        overlay.texts[r.node] = r.became()
        overlay.rows[r.node] = [(OVERLAY, r.became())]
    return overlay


__all__ = ["CATEGORIES", "OVERLAY", "fate_overlay"]
