"""A failure that sends the user to "the log" says where it is (issue 43 §2): from the command line, the file its
detail (torch's full message, the traceback) was written to, kept after the command ends; in the window, the box
below the words. On a real failing job: a decomposition table that raises when it is imported."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.jobs.client import run_job as run_worker
from pt2_viewer.core.jobs.schemas.failure import Failure

TABLE = "raise RuntimeError('boom at import')\n"


def test_the_command_line_names_the_log_file_it_kept(pt2_path: Callable[[str], Path], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "my_table.py"
    table.write_text(TABLE)
    assert cli_main(["decompose", str(pt2_path("batchnorm_train")), "--to", str(table), "-q"]) == 1
    err = capsys.readouterr().err
    assert "Importing the decomposition table file 'my_table.py' raised RuntimeError: boom at import" in err
    found = re.search(r"the log at (\S+\.log) has the full traceback", err)
    assert found, err
    log = Path(found.group(1))
    try:
        text = log.read_text(encoding="utf-8")
        assert "Traceback" in text and "RuntimeError: boom at import" in text and "my_table.py" in text
    finally:
        log.unlink()


def test_the_window_says_the_log_is_below(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:
    table = tmp_path / "my_table.py"
    table.write_text(TABLE)
    _, outcome = run_worker("decompose", {"program": str(pt2_path("batchnorm_train")), "to": str(table)},
                            tmp_path / "job", timeout_s=240)
    failed = outcome.failure_text()
    assert failed is not None
    words, detail = failed
    assert "the log below has the full traceback" in words and "RuntimeError: boom at import" in detail


def test_words_already_saying_where_are_kept() -> None:
    crashed = Failure("crashed", "The worker ended.", "The log has what the worker printed before it ended.")
    assert crashed.text(log="above") == "The worker ended. The log above has what the worker printed before it ended."
    said = Failure("load", "x.", "The log above has it; the log's lines are in the Log panel.")
    assert said.text(log="at /tmp/a.log") == said.text()
