"""The reader against tlparse, the de-facto reader of torch's structured log (`pip install tlparse`, the test
extra): every compile id, artifact, restart and failure tlparse lists for a log, the reader lists too."""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pt2_viewer.core.trace.reader import read_trace
from tests.trace_programs import compile_trace, ranks_trace, warm_trace

TLPARSE = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
# a row of failures_and_restarts.html: the compile id's link, then the failure type ("RestartAnalysis" for a restart)
_ROW = re.compile(r"<tr>\s*<td>\s*<a [^>]*>(\[[^\]]+\])</a>\s*</td>\s*<td>\s*(?:<pre>)?\s*([^<]+?)\s*"
                  r"(?:</pre>)?\s*</td>", re.S)


def _logs() -> list[Path]:
    return [log for folder in (compile_trace(), warm_trace(), ranks_trace()) for log in sorted(folder.glob("*.log"))]


def _tlparse(log: Path, out: Path) -> tuple[dict[str, list[str]], set[tuple[str, str]]]:
    """tlparse's compile directory (compile id -> artifact names, numbering and file suffix removed) and its
    failures and restarts (compile id, failure type)."""
    if not Path(TLPARSE).exists():
        pytest.fail("tlparse is not installed: pip install tlparse (the test extra)")
    subprocess.run([TLPARSE, str(log), "-o", str(out), "--no-browser", "--overwrite"], check=True,
                   capture_output=True, timeout=300)
    directory = json.loads((out / "compile_directory.json").read_text(encoding="utf-8"))
    names = {cid: sorted({_artifact(a["name"]) for a in entry["artifacts"]}) for cid, entry in directory.items()}
    rows = _ROW.findall((out / "failures_and_restarts.html").read_text(encoding="utf-8"))
    return names, {(cid, html.unescape(kind)) for cid, kind in rows}


def _artifact(file_name: str) -> str:
    name = re.sub(r"_\d+\.\w+$", "", file_name)
    return "inductor_output_code" if name.startswith("inductor_output_code_") else name


@pytest.mark.parametrize("which", range(4), ids=["compile", "warm", "rank0", "rank1"])
def test_every_compile_artifact_restart_and_failure_tlparse_lists(which, tmp_path):
    log = _logs()[which]
    theirs, their_failures = _tlparse(log, tmp_path / "tl")
    ours = {str(c.id): c for c in read_trace(log).compiles}
    assert set(theirs) - {"[-/-]"} == set(ours)
    for cid, names in theirs.items():
        if cid == "[-/-]":
            continue
        mine = {a.name for a in ours[cid].artifacts}
        assert set(names) <= mine, (cid, set(names) - mine)
    our_failures = {(str(c.id), "RestartAnalysis") for c in ours.values() if c.restart_reasons}
    our_failures |= {(str(c.id), str(c.metrics["fail_type"])) for c in ours.values() if c.metrics.get("fail_type")}
    assert their_failures == our_failures
    if which == 0:
        assert their_failures  # the print restarts its frame: the comparison is not vacuous
