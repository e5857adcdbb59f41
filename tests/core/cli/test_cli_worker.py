"""The command lines' torch jobs go through the worker, end to end: `run`, `decompose` and `numerics` start
`python -m pt2_viewer.core.worker` on the Python PT2V_WORKER_PYTHON names (a wrapper that records each start proves
it), a missing Python fails in one line naming it, `--timeout` stops a job, Ctrl+C ends the command and the worker's
whole process tree, and the `--json` output is the job's result. Each test is a real `python -m pt2_viewer` process,
as a user runs it; the job bodies have their in-process tests beside them (tests/core/{run,decompose,numerics})."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)

TIMEOUT_S = 300


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pt2_viewer", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, cwd=REPO_ROOT, env={**os.environ, **(env or {})})


@pytest.fixture
def recording_python(tmp_path: Path) -> tuple[Path, Path]:
    """A 'Python' that writes its pid and arguments to a log, then becomes this Python: (the wrapper, its log)."""
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "bin" / "python"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$$ $*" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


def test_run_and_decompose_run_on_the_chosen_worker_python(pt2_path: Callable[[str], Path], tmp_path: Path,  # noqa: F811
                                                           recording_python: tuple[Path, Path]) -> None:
    wrapper, log = recording_python
    program = pt2_path("batchnorm_train")
    run = cli("run", str(program), "--json", "--runs", "2", "--warmup", "1", env={"PT2V_WORKER_PYTHON": str(wrapper)})
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] and result["device"] == "cpu" and result["outputs"][0]["shape"] == [2, 4, 4, 4]
    assert result["latency"]["runs"] == 2 and "log" not in result
    assert "[load]" not in run.stderr  # --json: no progress lines
    out = tmp_path / "bn.core.pt2"
    dec = cli("decompose", str(program), "--to", "core", "-o", str(out), env={"PT2V_WORKER_PYTHON": str(wrapper)})
    assert dec.returncode == 0, dec.stderr
    assert out.is_file() and out.with_name("bn.core.mapping.json").is_file()
    assert "aten.conv2d.default" in dec.stdout and "[decompose]" in dec.stderr
    starts = log.read_text().splitlines()
    assert len(starts) == 2
    assert "-m pt2_viewer.core.worker run_program --request" in starts[0]
    assert "-m pt2_viewer.core.worker decompose --request" in starts[1]


def test_a_missing_worker_python_fails_in_one_line(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:  # noqa: F811
    missing = tmp_path / "no-such-env" / "bin" / "python"
    for command in (["run", str(pt2_path("batchnorm_train"))],
                    ["numerics", str(pt2_path("batchnorm_train")), "--candidate", "bf16"]):
        done = cli(*command, env={"PT2V_WORKER_PYTHON": str(missing)})
        assert done.returncode == 2  # the command could not do its work (core/cli/exit_status.py)
        assert done.stderr.startswith(f"error: Could not start the worker's Python {missing} (set by "
                                      "PT2V_WORKER_PYTHON)"), done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""
    # the command line's own Python imports no torch: the worker does
    timed = subprocess.run([sys.executable, "-X", "importtime", "-m", "pt2_viewer", "run",
                            str(pt2_path("batchnorm_train"))], capture_output=True, text=True, timeout=TIMEOUT_S,
                           cwd=REPO_ROOT, env={**os.environ, "PT2V_WORKER_PYTHON": str(missing)})
    imported = {line.rsplit("|", 1)[-1].strip() for line in timed.stderr.splitlines()
                if line.startswith("import time:")}
    assert "pt2_viewer.core.cli.jobs" in imported and "torch" not in imported


def test_numerics_json_comes_from_the_worker_and_timeout_stops_a_job(pt2_path: Callable[[str], Path],  # noqa: F811
                                                                     recording_python: tuple[Path, Path]) -> None:
    wrapper, log = recording_python
    program = pt2_path("batchnorm_train")
    done = cli("numerics", str(program), "--candidate", "core", "--json", env={"PT2V_WORKER_PYTHON": str(wrapper)})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] and result["kind"] == "core" and result["per_node"] and result["compared"] > 0
    assert "-m pt2_viewer.core.worker numerics" in log.read_text()
    # a limit the job cannot meet: stopped, said in one line with the fix
    slow = cli("run", str(program), "--timeout", "0.5", "-q")
    assert slow.returncode == 2
    assert "time limit of 0.5 s" in slow.stderr and "--timeout" in slow.stderr and "Traceback" not in slow.stderr


def test_ctrl_c_ends_the_command_and_the_worker(pt2_path: Callable[[str], Path],  # noqa: F811
                                               recording_python: tuple[Path, Path]) -> None:
    wrapper, log = recording_python
    # started as a terminal starts it: Ctrl+C not ignored, whatever this test process inherited (a Python started
    # with SIGINT ignored keeps ignoring it)
    proc = subprocess.Popen([sys.executable, "-m", "pt2_viewer", "run", str(pt2_path("deep_encoder")), "--runs",
                             "100000", "--warmup", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO_ROOT, env={**os.environ, "PT2V_WORKER_PYTHON": str(wrapper)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    worker_pid = 0
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # the worker has loaded the program and is running it
            if line.startswith("[eager]"):
                break
        worker_pid = int(log.read_text().split()[0])
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        if worker_pid and _alive(worker_pid):  # failed: end the worker too, or it runs its 100,000 calls on
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker_pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert "Cancelled: the worker and everything it started were stopped." in err and "Traceback" not in err
    assert not _alive(worker_pid)


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting for its parent (the command, gone now, reaped it or init will)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_the_python_chosen_in_preferences_runs_the_command_line_s_jobs(pt2_path: Callable[[str], Path],  # noqa: F811
                                                                       tmp_path: Path,
                                                                       recording_python: tuple[Path, Path]) -> None:
    wrapper, log = recording_python
    config = tmp_path / "config"  # the window's settings (QSettings' INI file), as File > Preferences writes them
    (config / "pt2-viewer").mkdir(parents=True)
    (config / "pt2-viewer" / "PT2 Viewer.conf").write_text(f"[worker]\nkind=local\npython={wrapper}\n")
    env = {"XDG_CONFIG_HOME": str(config), "PT2V_WORKER_PYTHON": ""}
    done = cli("run", str(pt2_path("batchnorm_train")), "--runs", "1", "--warmup", "0", "-q", env=env)
    assert done.returncode == 0, done.stderr
    assert "-m pt2_viewer.core.worker run_program" in log.read_text()
