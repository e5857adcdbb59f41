"""`pt2-viewer report A.pt2 B.pt2`: the Compare tab is the diff (core/diff/), painted on both graphs, listed by
module and rolled up; a click in the list reveals the node (checked in headless Chromium)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.graph import palette
from tests.core.report.browser import chromium
from tests.diff_programs import diff_program_path


def _page(a: str, b: str, out: Path) -> tuple[dict, str]:
    assert cli_main(["report", str(diff_program_path(a)), str(diff_program_path(b)), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    assert data
    return json.loads(data.group(1).replace("<\\/", "</")), text


@pytest.fixture(scope="module")
def block_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    out = tmp_path_factory.mktemp("diff-report") / "report.html"
    data, text = _page("resnet", "resnet_block_changed", out)
    return out, data, text


def test_both_graphs_are_painted_with_the_changes(block_page: tuple[Path, dict, str]) -> None:
    _, data, _ = block_page
    a, b = (p["overlay"] for p in data["programs"])
    changed = palette.DIFF_CATEGORIES["changed"]
    assert a["colours"][changed] == b["colours"][changed] == palette.DIFF_COLOURS_LIGHT["changed"]
    assert a["legend"] == b["legend"] == ["changed (2)"]
    assert a["categories"] == {"relu__7": changed, "relu__8": changed}
    assert b["categories"] == {"gelu": changed, "gelu_1": changed}
    # a collapsed group says how many changes it holds, and so do the groups above it
    assert b["group_changes"] == {"layer2.1.relu": 1, "layer2.1.relu@1": 1, "layer2.1": 2, "layer2": 2, "": 2}


def test_the_compare_tab_lists_the_changes_by_module_and_rolls_them_up(block_page: tuple[Path, dict, str]) -> None:
    _, data, _ = block_page
    tab = data["extra_html"]
    assert "0 added, 0 removed, 2 changed" in tab
    assert re.search(r"<code>layer2\.1\.relu</code></td><td>0</td><td>0</td><td>2</td><td>2 op changes", tab)
    links = re.findall(r"data-diff-program='(\d+)' data-diff-node='([^']+)'", tab)
    assert links == [("1", "gelu"), ("1", "gelu_1")]
    assert "Ops on each side" in tab  # the op counts stay below the diff


def test_gpt2_against_its_decomposition_rolls_up_per_module(tmp_path: Path) -> None:
    data, _ = _page("gpt2", "gpt2_core", tmp_path / "gpt2.html")
    tab = data["extra_html"]
    assert re.search(r"<code>transformer\.h\.0\.attn</code></td><td>[1-9]\d*</td>", tab)
    b = data["programs"][1]["overlay"]
    kinds = {palette.DIFF_CATEGORIES[k] for k in ("added", "changed")}
    assert b["categories"] and set(b["categories"].values()) == kinds  # added and changed nodes on the right


def test_a_link_to_a_change_reveals_the_node_in_the_browser(block_page: tuple[Path, dict, str],
                                                           tmp_path: Path) -> None:
    page, _, _ = block_page
    url = page.resolve().as_uri() + "#reveal=1:gelu_1"
    done = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900",
                           "--virtual-time-budget=10000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    dom = done.stdout
    selected = re.search(r'<g class="node sel ov"[^>]*>.*?</g>', dom, re.S)
    assert selected, done.stderr[-2000:]
    assert "GELU (call 2)" in selected.group(0)
    assert re.search(r'<button data-tab="extra" class="on">Compare</button>', dom)  # the list stays in view
    assert " · 2 changed" in dom  # layer2's box says what it holds
