"""One palette for node kinds and overlays (core/graph/palette.py): the window's theme and the HTML report colour
every kind, and an overlay's scale and categories, from the same table."""
from __future__ import annotations

import json
import re

from pt2_viewer.app import theme
from pt2_viewer.core.graph import palette
from pt2_viewer.core.model.node_kinds import KINDS
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.report.page import ReportPage, render_page
from pt2_viewer.core.report.program_report import archives_page
from tests.programs import REPO_ROOT

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"


def test_every_kind_has_one_colour_in_the_window_and_the_report() -> None:
    assert set(KINDS) <= set(palette.KIND_COLOURS)
    for kind in KINDS:
        assert theme.kind_color(kind, dark=False).name() == palette.kind_colour(kind)
    assert theme.kind_color("no such kind", dark=False).name() == palette.KIND_COLOURS["other"]
    assert theme.overlay_category_color(0, dark=False).name() != theme.overlay_category_color(1, dark=False).name()
    assert theme.overlay_scale_color(0.0, dark=False).name() == palette.OVERLAY_SCALE_LIGHT[0]
    page = archives_page([read_archive(EXAMPLE)])
    assert isinstance(page, ReportPage)
    html = render_page(page)
    colours = json.loads(re.search(r"const COLOURS = (\{.*?\}),", html).group(1))  # type: ignore[union-attr]
    assert colours == palette.KIND_COLOURS
    assert json.dumps(list(palette.OVERLAY_CATEGORIES)) in html
