"""`pt2-viewer report SCRIPT.py --diagnose -o report.html`: the script runs in the worker, and the page lists every
export call with its outcome and explanation, the doctor's problems with their fixes, and the graph of each program
(the draft program of a failed call included), checked in headless Chromium."""
from __future__ import annotations

import argparse
import os

import pytest

from pt2_viewer.core.cli import report as report_cli
from pt2_viewer.core.platform import temp_dirs
from tests.core.export.test_doctor import script_text
from tests.core.report.browser import run_selftest


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_script_report_lists_calls_problems_and_programs(tmp_path):
    script = tmp_path / "data_dependent.py"
    script.write_text(script_text(), encoding="utf-8")
    parser = argparse.ArgumentParser()
    report_cli.configure(parser)
    page = tmp_path / "report.html"
    args = parser.parse_args([str(script), "--diagnose", "-o", str(page)])
    assert report_cli.main(args) == 0
    assert not list(temp_dirs.root().glob(f"pt2v-{os.getpid()}-report-*"))  # the run folder is gone
    run = run_selftest(page, "item", tmp_path / "profile")
    r = run.result
    assert r["errors"] == [] and run.console == []
    assert "3 export calls" in r["extra"]
    assert "#0 Foo (non-strict) failed: data_dependent_guard" in r["extra"]
    assert "torch._check(a // 2 >= 5)" in r["extra"]  # the doctor's fix, with its diff
    assert "torch's draft export could not diagnose this call" in r["extra"]  # the fallback, in words
    assert r["search"]["hits"] >= 1  # the first program (#0's draft) has the .item() node
    text = page.read_text(encoding="utf-8")
    assert '"name":"#0 Foo (draft)"' in text and '"name":"#2 Index"' in text
