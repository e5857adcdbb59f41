"""The report of a failed script's export folder says each failure once, in the user's words (the same formatter as
the window, core/export/plain_words.py): no `s52`, `L['a']`, `Eq(` or `u0` in the calls or the guards, and the draft
program's shapes use the script's Dim names. Real diagnosed runs (doctor_runs.py, cached)."""
from __future__ import annotations

import json
import re

import pytest

from pt2_viewer.core.report.script_report import script_page
from tests.core.export.doctor_runs import diagnosed

TORCH_WORDS = re.compile(r"\b[su]\d+\b|L\['|Eq\(|unhinted")


@pytest.mark.parametrize("name", ["module_equal_dims", "module_item_range", "branch_on_sum"])
def test_a_failed_scripts_report_speaks_the_users_words(name):
    script, _ = diagnosed(name)
    page = script_page(script.parent.parent / "out")
    calls = re.sub(r"<[^>]+>", " ", page.extra_html)
    assert not TORCH_WORDS.search(calls), TORCH_WORDS.findall(calls)
    for program in page.programs:  # the draft program's guards, where there is one (its ops' own arguments, such
        # as an assert's message string, are the program's content and stay as they are)
        assert not re.search(r"L\['|Eq\(", json.dumps(program.get("guards", [])))
    if name == "module_equal_dims":
        assert calls.count("Export requires a.shape[0] == b.shape[0].") == 1
        assert "[batch_a, 3]" in json.dumps(page.programs)  # the draft program's shapes in the script's names
