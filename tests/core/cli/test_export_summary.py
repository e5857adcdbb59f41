"""`pt2-viewer export`'s summary says why a script stopped as the window's Explanation does: one plain sentence and the
user's line, not torch's wall of text (its TORCHDYNAMO_* hints and links stay in report.json, which is unchanged).
Real scripts run in the real worker."""
from __future__ import annotations

import json
import re
from pathlib import Path

from pt2_viewer.app.cli import main as cli_main

DOCTOR = Path(__file__).resolve().parents[2] / "scripts" / "doctor"


def test_a_script_stopped_by_an_export_failure_leads_with_the_plain_sentence(tmp_path, capsys):
    code = cli_main(["export", str(DOCTOR / "branch_on_sum.py"), "-o", str(tmp_path), "-q"])
    out = capsys.readouterr().out
    assert code == 1
    # the headline of the window's Exports list and status bar (core/export/plain_words.py), in the user's words
    sentence = "Export cannot decide `if y.sum() > 0` while tracing: it depends on tensor data."
    stopped = next(line for line in out.splitlines() if line.startswith("The script stopped"))
    assert stopped == ("The script stopped at line 7 (if y.sum() > 0:): export #0 failed "
                       f"(GuardOnDataDependentSymNode): {sentence}")
    # the call's block leads the same way: the sentence, then the user's line, then torch's key line
    block = out.splitlines()[1:4]
    assert block[0].endswith(f"FAILED  data_dependent_guard: {sentence}")
    assert block[1].strip() == "at branch_on_sum.py:7: if y.sum() > 0:"
    assert block[2].strip().startswith("torch: Could not guard on data-dependent expression")
    assert "Eq(" not in out and not re.search(r"\bu\d+\b", out)  # torch's key line in the user's words
    assert f"torch's own message: {tmp_path / 'report.json'} (calls[0].failure.message)" in out
    for noise in ("TORCHDYNAMO_", "TORCH_LOGS", "https://", "draft_export()", "Caused by"):
        assert noise not in out, f"torch's long message leaked into the summary: {noise}"
    assert f"the whole message and the traceback: {tmp_path / 'report.json'} (script_error)" in out
    # report.json still holds torch's whole message
    error = json.loads((tmp_path / "report.json").read_text())["script_error"]
    assert "TORCHDYNAMO_EXTENDED_DEBUG_CPP" in error["message"] and error["line"]["line"] == 7
    # the hint says an export stopped the script, not that the script raised the error itself
    assert error["hint"].startswith("Export #0 at line 13 failed and the script did not catch it")  # the export call


def test_a_script_of_its_own_error_gets_its_first_sentence(tmp_path, capsys):
    script = tmp_path / "config_check.py"
    script.write_text("layers = 2\n"
                      "why = 'The config is wrong. Expected 3 layers, got 2.\\nSee the README.'\n"
                      "if layers != 3:\n"
                      "    raise ValueError(why)\n",
                      encoding="utf-8")
    code = cli_main(["export", str(script), "-o", str(tmp_path / "out"), "-q"])
    out = capsys.readouterr().out
    assert code == 1
    assert "The script stopped at line 4 (raise ValueError(why)): ValueError: The config is wrong." in out.splitlines()
    assert "See the README." not in out and "the whole message and the traceback" in out
    assert json.loads((tmp_path / "out" / "report.json").read_text())["script_error"]["hint"].startswith(
        "The script raised this error itself")
