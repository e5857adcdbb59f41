"""The colours of node kinds and of overlays, without Qt: the one table both the window (app/theme.py, which derives
its dark-palette variants) and the HTML report (core/report/) read, so a kind has the same colour in both.

Kinds are those of core/model/node_kinds.py; a kind not listed takes "other".
"""
from __future__ import annotations

# A node's fill by kind, on a light background.
KIND_COLOURS: dict[str, str] = {
    "user_input": "#cfe8cf", "parameter": "#e6e0f5", "buffer": "#ede3d0", "constant": "#e8e8e8", "token": "#e8e8e8",
    "output": "#cfe1f5", "subgraph": "#f2f2f2", "matmul": "#f6c9a8", "conv": "#f3b6a0", "norm": "#cde7ec",
    "activation": "#f8e3a6", "reduction": "#d9d0ee", "view": "#eeeeee", "elementwise": "#dfeaf6",
    "creation": "#e3f0d8", "hop": "#f7c8dd", "custom": "#ffd37a", "symbolic": "#f0f0e0", "assert": "#f5dede",
    "other": "#e0e0e0",
}

# An overlay's scale runs from cool to hot (its ends kept apart from the selection's orange); categories take
# distinct colours in order (Tableau 10 and two more, readable on light and dark), then the colours only a category
# that names its own takes: a muted slate for a diff's `lowered` (what lowering was expected to do, drawn quietly).
OVERLAY_SCALE_LIGHT = ("#fff5eb", "#fdd0a2", "#fd8d3c", "#d94801", "#7f2704")
OVERLAY_SCALE_DARK = ("#3b2a1e", "#7a3c12", "#c2560f", "#f08a3e", "#ffd2a8")
OVERLAY_CATEGORIES = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                      "#9c755f", "#bab0ac", "#86bcb6", "#d37295", "#a9b1ba")
MUTED = 12  # the muted slate

# A diff (core/diff/) paints nodes added, removed and changed as overlay categories: green, red and yellow, and
# lowered (what lowering was expected to do) muted, so the window (which lightens or darkens categories for its
# palette) and the report agree.
DIFF_CATEGORIES = {"added": 2, "removed": 3, "changed": 5, "lowered": MUTED}

# Categories that always mean one thing take one colour, whatever their size: a lowering's delegated nodes are blue,
# those left to the portable kernels orange, after any backend (core/deploy/delegation.py).
DELEGATION_CATEGORIES = {"delegated": 0, "not delegated": 1}
DIFF_COLOURS_LIGHT = {kind: OVERLAY_CATEGORIES[i] for kind, i in DIFF_CATEGORIES.items()}


def kind_colour(kind: str) -> str:
    return KIND_COLOURS.get(kind, KIND_COLOURS["other"])


__all__ = ["DELEGATION_CATEGORIES", "DIFF_CATEGORIES", "DIFF_COLOURS_LIGHT", "KIND_COLOURS", "MUTED",
           "OVERLAY_CATEGORIES", "OVERLAY_SCALE_DARK", "OVERLAY_SCALE_LIGHT", "kind_colour"]
