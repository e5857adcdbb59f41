"""`pt2-viewer trace SCRIPT.py [-o DIR] [--json]` (issue 40 §5, §6): the script runs in a fresh worker under
`TORCH_TRACE` with provenance tracking on and the compile caches off, then the answer is the one `trace DIR` gives.
Each test is a real `python -m pt2_viewer` process, as a user runs it, on real torch.compile runs (Inductor, CPU)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pt2_viewer.core.cli.trace import OutRefused, check_out, deliver_trace
from tests.core.cli.test_cli_worker import _alive  # a process gone, not a zombie
from tests.programs import REPO_ROOT
from tests.trace_programs import marked_line

pytestmark = pytest.mark.worker

TIMEOUT_S = 300
ENV = {"OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}  # two shared cores

SCRIPT = '''\
import torch


def step(x):  # line: step
    y = x.sin()
    print("between the graphs")  # line: print
    return y + 1


compiled = torch.compile(step)
compiled(torch.ones(2))
compiled(torch.ones(3))  # a recompile: x.size(0) was 2
'''


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pt2_viewer", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, cwd=REPO_ROOT, env={**os.environ, **ENV, **(env or {})})


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """(the script, its trace folder, the command's run): the script first run plainly on an Inductor cache, then
    traced on that same cache, so any cache left on would replay the first run's graphs."""
    folder = tmp_path_factory.mktemp("script")
    script = folder / "model.py"
    script.write_text(SCRIPT, encoding="utf-8")
    cache = {"TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor-cache")}
    # with provenance tracking on, as the traced run has it: Inductor's cache keys hold its config
    warm = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=TIMEOUT_S,
                          env={**os.environ, **ENV, **cache, "INDUCTOR_PROVENANCE": "1"})
    assert warm.returncode == 0, warm.stderr[-2000:]
    out = folder / "trace"
    return script, out, cli("trace", str(script), "-o", str(out), "--json", env=cache)


def test_a_script_s_trace_has_its_compiles_graph_break_and_recompile(traced) -> None:  # type: ignore[no-untyped-def]
    script, out, run = traced
    assert run.returncode == 0, run.stderr[-2000:]
    answer = json.loads(run.stdout)  # stdout is the JSON alone: the script's print and the notes go to stderr
    assert "between the graphs" in run.stderr and f"is in {out}" in run.stderr
    ids = [c["id"] for c in answer["compiles"]]
    assert "[0/0]" in ids and "[0/1]" in ids and all(c["rank"] is None for c in answer["compiles"])
    first = next(c for c in answer["compiles"] if c["id"] == "[0/0]")
    assert first["frame"] == {"function": "step", "file": str(script), "line": marked_line(script, "step")}
    (brk,) = answer["graph_breaks"]
    assert (brk["file"], brk["line"]) == (str(script), marked_line(script, "print"))
    assert "reorderable_logging_functions" in brk["fix"] and {"[0/0]", "[0/1]"} <= set(brk["compile_ids"])
    recompile = next(r for r in answer["recompiles"] if r["compile_id"] == "[0/1]")
    assert recompile["reasons"] == ["`x.size(0)` was 2 when compiled for [0/0], now 3"]
    # the same answer as the folder gives
    again = cli("trace", str(out), "--json")
    assert again.returncode == 0 and json.loads(again.stdout) == answer
    # provenance tracking was on: Inductor's kernel-to-node mappings are in the log
    (log,) = out.glob("dedicated_log_torch_trace_*.log")
    assert '"name": "inductor_provenance_tracking_node_mappings"' in log.read_text(encoding="utf-8")


def test_the_caches_are_off_so_every_graph_is_this_run_s(traced) -> None:  # type: ignore[no-untyped-def]
    """The plain run before it filled the Inductor cache: with the FX-graph and AOTAutograd caches on, the traced
    run would replay those graphs (cache hits, the earlier run's lines). Off, each graph is compiled again."""
    _script, out, run = traced
    answer = json.loads(run.stdout)
    assert not [c["id"] for c in answer["compiles"] if c["cache_hit"]]
    compiled = [c for c in answer["compiles"] if c["graphs"]]
    assert compiled and all("inductor_code" in c["graphs"] and c["seconds"] for c in compiled)
    (log,) = out.glob("dedicated_log_torch_trace_*.log")
    text = log.read_text(encoding="utf-8")
    assert not re.findall(r'"name": "\w*_cache_hit"', text)  # no fx_graph_cache_hit, aotautograd_cache_hit
    assert '"name": "fx_graph_cache_disabled"' in text


def test_a_failing_script_is_one_line_and_exit_1_its_trace_kept(tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text("import torch\n\ntorch.compile(lambda x: x + 1)(torch.ones(2))\nraise ValueError('boom')\n")
    run = cli("trace", str(script), "-q")  # no -o: a new folder of its own, named
    assert run.returncode == 1 and run.stdout == ""
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("pt2-viewer trace: The script stopped at fails.py:4 with ValueError: boom")
    found = re.search(r"the trace of fails\.py is in (\S+)\)$", line)
    assert found, line
    folder = Path(found.group(1))
    try:
        assert folder.parent == Path(tempfile.gettempdir()) and folder.name.startswith("pt2-viewer-trace")
        assert list(folder.glob("dedicated_log_torch_trace_*.log"))  # what ran before the error was traced
    finally:
        for log in folder.glob("*"):
            log.unlink()
        folder.rmdir()


def test_a_folder_that_holds_something_else_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "model.py"
    script.write_text("import torch\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    run = cli("trace", str(script), "-o", str(mine))
    assert run.returncode == 2 and "is not empty and holds no torch.compile trace" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert [p.name for p in mine.iterdir()] == ["notes.txt"] and (mine / "notes.txt").read_text() == "keep me"
    folder = cli("trace", str(tmp_path), "-o", str(mine))  # -o is for a script
    assert folder.returncode == 2 and "-o is for a script" in folder.stderr


def test_cancel_ends_the_command_and_the_script_s_worker(tmp_path: Path) -> None:
    script = tmp_path / "hangs.py"
    script.write_text("import os\nimport time\n\nprint('worker', os.getpid(), flush=True)\ntime.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-m", "pt2_viewer", "trace", str(script), "-o", str(tmp_path / "t")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
                            env={**os.environ, **ENV})
    worker_pid = 0
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # the script's own output, echoed: it has compiled and is sleeping
            if line.startswith("worker "):
                worker_pid = int(line.split()[1])
                break
        assert worker_pid
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        if worker_pid and _alive(worker_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker_pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Cancelled" in err and "Traceback" not in err
    assert not _alive(worker_pid)



def test_an_earlier_trace_in_the_folder_is_replaced_by_this_run_s(tmp_path: Path) -> None:
    """No worker: the folder rule and the delivery of the logs the job wrote (core/cli/trace.py)."""
    out = tmp_path / "trace"
    out.mkdir()
    (out / "dedicated_log_torch_trace_old.log").write_text("the earlier run's\n")
    check_out(out)  # an earlier trace: allowed
    made = tmp_path / "job" / "trace"
    made.mkdir(parents=True)
    (made / "dedicated_log_torch_trace_new.log").write_text("this run's\n")
    assert deliver_trace(made, out) == ["dedicated_log_torch_trace_new.log"]
    assert [p.name for p in out.iterdir()] == ["dedicated_log_torch_trace_new.log"]
    assert deliver_trace(tmp_path / "job" / "none", out) == []  # a run that wrote nothing removes nothing
    assert [p.name for p in out.iterdir()] == ["dedicated_log_torch_trace_new.log"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutRefused, match="is a file, not a folder"):
        check_out(tmp_path / "file")
