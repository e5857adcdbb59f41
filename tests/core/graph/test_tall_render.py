"""Issue 30: `render --expand all` of an 80-layer decoder to PNG was 359 x 31,128 px, its text a pixel high. A very
tall picture is folded into columns, cut between rows of nodes, at a legible scale; where even that passes what a
PNG viewer opens, it keeps the scale, shows the top and says what it cut (core/graph/image_limits.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from pt2_viewer.core.graph.image_limits import MAX_SIDE, MIN_SCALE, column_plan
from tests.issue30_programs import deep_decoder
from tests.programs import REPO_ROOT


def test_an_80_layer_decoder_renders_as_legible_columns(tmp_path: Path) -> None:
    out = tmp_path / "deep.png"
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", "render", str(deep_decoder()), "-o", str(out),
                          "--expand", "all"], capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(out)
    assert "folded into" in run.stderr and "columns, read left to right" in run.stderr and "cut" not in run.stderr
    image = QImage(str(out))
    assert not image.isNull()  # Qt reads it back
    assert image.height() <= 2 * image.width() and image.height() <= MAX_SIDE  # no more 359 x 31,128


def test_columns_are_cut_between_nodes_and_a_graph_too_big_says_where_it_stops() -> None:
    rows = [(float(y), y + 60.0) for y in range(0, 200_000, 100)]  # a node every 100 units, 60 tall
    plan = column_plan(500.0, 200_000.0, rows)
    assert plan is not None and plan.size.scale >= MIN_SCALE and plan.size.columns == len(plan.bands) > 1
    for top, bottom in plan.bands:
        assert not any(a < top < b or a < bottom < b for a, b in rows)  # never through a node
    assert plan.cut_at is not None and 0 < plan.size.shown < 1  # 100M units² pass the limits at a legible scale
    assert "the rest is cut" in plan.size.note()
    assert plan.bands[-1][1] == plan.cut_at
    assert column_plan(500.0, 1_400.0, rows) is None  # not tall: drawn as it is
