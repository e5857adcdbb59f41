"""`pt2-viewer report FILE.pt2`: one self-contained HTML file, checked in a real browser (headless Chromium): it
loads with no console errors, shows the node count, and search and expand work on real exported programs."""
from __future__ import annotations

import argparse
import re

import pytest

from pt2_viewer.core.cli import report as report_cli
from tests.core.report.browser import run_selftest


def write(pt2, out) -> int:
    parser = argparse.ArgumentParser()
    report_cli.configure(parser)
    return report_cli.main(parser.parse_args([str(pt2), "-o", str(out)]))


@pytest.fixture(scope="module")
def encoder_page(pt2_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "deep_encoder.html"
    assert write(pt2_path("deep_encoder"), out) == 0
    return out


def test_page_is_self_contained_and_small(encoder_page):
    text = encoder_page.read_text(encoding="utf-8")
    # nothing to fetch: no external scripts, styles, images or links; the CSP forbids any connection
    assert not re.search(r'(src|href)\s*=\s*"(?!#|data:)', text)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)
    assert "default-src 'none'" in text
    assert encoder_page.stat().st_size < 2_000_000  # 1,506 nodes


def test_browser_shows_the_count_and_search_and_expand_work(encoder_page, tmp_path):
    run = run_selftest(encoder_page, "linear_7", tmp_path / "profile")
    r = run.result
    assert r["errors"] == [] and run.console == []
    assert r["node_count_text"] == "1506 nodes"
    # collapsed: a few boxes; expanding one group shows what is inside it
    assert r["collapsed"]["nodes"] < 10 and r["collapsed"]["groups"] == 32  # the 32 encoder layers
    assert r["expanded_one"]["open"] == 1 and r["expanded_one"]["groups"] > r["collapsed"]["groups"]
    # search finds a node hidden in a collapsed layer, expands its groups and selects it on click
    assert r["search"]["hits"] >= 1 and r["search"]["nodes"] > r["collapsed"]["nodes"]
    assert r["details"].startswith("linear_7torch.ops.aten.linear.default")
    assert r["all_open"]["nodes"] == 1506
    assert "PARAMETERlayers.0.self_attn.in_proj_weight" in r["signature"]


def test_symbols_and_ranges_of_a_dynamic_program(pt2_path, tmp_path):
    out = tmp_path / "dyn.html"
    assert write(pt2_path("tutorial_auto_dims"), out) == 0
    run = run_selftest(out, "add", tmp_path / "profile")
    assert run.result["errors"] == [] and run.console == []
    assert re.search(r"s\d+\[\d+, ", run.result["symbols"])  # a symbol with its range


def test_a_bad_file_is_one_line_and_no_report(tmp_path, capsys):
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip")
    assert write(bad, tmp_path / "r.html") == 1
    err = capsys.readouterr().err
    assert err.startswith("pt2-viewer report:") and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_program_and_its_decomposition_side_by_side(pt2_path, tmp_path):
    parser = argparse.ArgumentParser()
    report_cli.configure(parser)
    out = tmp_path / "compare.html"
    train, decomposed = pt2_path("batchnorm_train"), pt2_path("batchnorm_train_decomposed")
    assert report_cli.main(parser.parse_args([str(train), str(decomposed), "-o", str(out)])) == 0
    run = run_selftest(out, "batch_norm", tmp_path / "profile")
    assert run.result["errors"] == [] and run.console == []
    compare = run.result["extra"]
    assert compare.startswith("batchnorm_train.pt2 → batchnorm_train_decomposed.pt2")  # the diff (test_diff_report)
    assert "Ops on each side (differences first)opbatchnorm_train.pt2batchnorm_train_decomposed.pt2" in compare
    text = out.read_text(encoding="utf-8")
    assert '"name":"batchnorm_train.pt2: model"' in text and '"name":"batchnorm_train_decomposed.pt2: model"' in text


def test_numerics_error_overlay(pt2_path, tmp_path):
    """`pt2-viewer numerics --json` (bf16 against the program, run by torch) gives the error overlay in the page."""
    import os
    import subprocess
    import sys

    pt2 = pt2_path("topk_cond")
    result = tmp_path / "numerics.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "pt2_viewer", "numerics", str(pt2), "--candidate", "bf16", "--json"],
                          capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    result.write_text(done.stdout, encoding="utf-8")
    parser = argparse.ArgumentParser()
    report_cli.configure(parser)
    out = tmp_path / "numerics.html"
    assert report_cli.main(parser.parse_args([str(pt2), "--overlay", str(result), "-o", str(out)])) == 0
    run = run_selftest(out, "linear", tmp_path / "profile")
    assert run.result["errors"] == [] and run.console == []
    overlay = run.result["overlay"]
    assert overlay["text"].startswith("overlay ") and "Compared 8 nodes with bf16" in overlay["text"]
    assert overlay["coloured"] == 8
    assert run.result["details"].startswith("Numerics")  # the node's error, first in its details


def test_a_bad_overlay_is_one_line(pt2_path, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2", encoding="utf-8")
    parser = argparse.ArgumentParser()
    report_cli.configure(parser)
    args = parser.parse_args([str(pt2_path("topk_cond")), "--overlay", str(bad), "-o", str(tmp_path / "r.html")])
    assert report_cli.main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("pt2-viewer report: Cannot read bad.json") and err.count("\n") == 1
