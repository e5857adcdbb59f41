"""The SSH worker against a real sshd on 127.0.0.1 (tests/core/jobs/ssh_server.py): jobs give what a local worker
gives, run on the server's Python (the local one is a path that does not exist), copy each file once by hash, bring
their outputs back into the local folders, and leave no process behind on the server when cancelled or cut off."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pt2_viewer.core.jobs import process_tree, protocol
from pt2_viewer.core.jobs.python_env import FROM_FLAG, choose_worker, set_preferred
from pt2_viewer.core.jobs.remote.any_worker import worker_job
from pt2_viewer.core.jobs.remote.job import DISCONNECTED, TRANSFER, RemoteJob
from pt2_viewer.core.jobs.remote.ssh import SshCommand
from pt2_viewer.core.jobs.remote.target import WorkerUrlError, parse_worker_url
from pt2_viewer.core.jobs.spec import JobSpec
from tests.core.jobs.ssh_server import HOST_ALIAS, SshServer, ssh_server, use_ssh_server  # noqa: F401

HANGING_SCRIPT = """\
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(600)"])
print("ready", child.pid, flush=True)
time.sleep(600)
"""


def _until(condition, timeout_s: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    """Wait for a condition on another process (the server's supervisor acts on its own time)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _local(job: str, request: dict, out: Path) -> dict:  # type: ignore[type-arg]
    """The same job by a local worker's code, in this process."""
    from pt2_viewer.core.worker.__main__ import load_job

    out.mkdir(parents=True, exist_ok=True)
    return load_job(job)(request, out, lambda event: None)


def test_worker_urls_and_which_worker_wins(monkeypatch):
    w = parse_worker_url("ssh://ana@gpu-7:2222/opt/venv/bin/python")
    assert (w.user, w.host, w.port, w.python, w.destination) == ("ana", "gpu-7", 2222, "/opt/venv/bin/python",
                                                                  "ana@gpu-7")
    assert parse_worker_url("ssh://gpu/usr/bin/python3").user is None
    for bad, why in (("ssh://gpu", "absolute path"), ("ssh://gpu:x/p", "port"), ("ssh:///usr/bin/python", "host"),
                     ("gpu:/usr/bin/python", "not an SSH worker")):
        with pytest.raises(WorkerUrlError, match=why):
            parse_worker_url(bad)
    monkeypatch.delenv("PT2V_WORKER", raising=False)
    monkeypatch.delenv("PT2V_WORKER_PYTHON", raising=False)
    set_preferred("ssh://prefs/usr/bin/python")
    try:
        assert choose_worker().path == "ssh://prefs/usr/bin/python"
        monkeypatch.setenv("PT2V_WORKER_PYTHON", "/local/python")
        assert choose_worker().path == "/local/python"
        monkeypatch.setenv("PT2V_WORKER", "ssh://env/usr/bin/python")
        assert choose_worker().path == "ssh://env/usr/bin/python" and choose_worker().remote
        flag = choose_worker("ssh://flag/usr/bin/python")
        assert (flag.path, flag.source) == ("ssh://flag/usr/bin/python", FROM_FLAG)
        assert not choose_worker("/other/python").remote
    finally:
        set_preferred(None)


def test_ssh_never_prompts_and_shares_one_connection_unless_the_config_says_otherwise(tmp_path, monkeypatch):
    target = parse_worker_url("ssh://box/usr/bin/python")
    argv = SshCommand.for_target(target, {"PT2V_SSH_COMMAND": f"ssh -F {tmp_path / 'none'}"}).argv("probe", "x")
    assert argv[:3] == ["ssh", "-F", str(tmp_path / "none")] and "BatchMode=yes" in argv
    assert "ControlMaster=auto" in argv and any(a.startswith("ControlPath=") for a in argv)
    config = tmp_path / "config"
    config.write_text(f"Host box\n  ControlMaster auto\n  ControlPath {tmp_path}/own-%C\n")
    argv = SshCommand.for_target(target, {"PT2V_SSH_COMMAND": f"ssh -F {config}"}).argv("probe", "x")
    assert "BatchMode=yes" in argv and not any(a.startswith("Control") for a in argv)
    assert argv[-1].startswith("exec /usr/bin/python -c ")


def test_unknown_host_key_and_refused_key_say_run_ssh_once(ssh_server: SshServer, tmp_path):
    config = tmp_path / "config"
    config.write_text(ssh_server.config.read_text().replace(str(ssh_server.root / "known_hosts"),
                                                            str(tmp_path / "empty_known_hosts")))
    env = {"PT2V_SSH_COMMAND": f"ssh -F {config}", "PT2V_WORKER_SCRATCH": str(ssh_server.scratch)}
    os.environ.update(env)
    try:
        job = RemoteJob(JobSpec("decompose", {"program": "/nowhere.pt2"},
                                tmp_path / "out"), parse_worker_url(ssh_server.url))
        outcome = job.wait()
        assert outcome.status == protocol.START_FAILED
        assert f"Run `ssh {HOST_ALIAS}` once in a terminal" in outcome.message and "host key" in outcome.message
        config.write_text(ssh_server.config.read_text().replace("id_user", "id_nobody"))
        outcome = RemoteJob(JobSpec("decompose", {"program": "/nowhere.pt2"},
                                    tmp_path / "out2"), parse_worker_url(ssh_server.url)).wait()
        assert outcome.status == protocol.START_FAILED and "could not log in" in outcome.message
        assert f"Run `ssh {HOST_ALIAS}` once in a terminal" in outcome.message
    finally:
        for key in env:
            os.environ.pop(key, None)


def test_decompose_and_run_over_ssh_give_what_a_local_worker_gives(use_ssh_server: SshServer, pt2_path, tmp_path):
    src = pt2_path("batchnorm_train")
    out = tmp_path / "remote"
    events: list[dict] = []  # type: ignore[type-arg]
    job = worker_job(JobSpec("decompose", {"program": str(src), "to": "core", "output": str(out / "bn.core.pt2")},
                             out, on_event=events.append), use_ssh_server.url)  # as --worker URL gives it
    assert isinstance(job, RemoteJob)
    outcome = job.wait()
    assert outcome.ok, outcome.message
    started = next(e for e in events if e["type"] == "remote_started")
    assert started["python"] == use_ssh_server.python  # the server's Python; the local one does not exist
    assert started["code"].startswith(str(use_ssh_server.scratch))  # the worker code copied there, not ours
    assert set(job.uploaded) == {"the worker code", src.name}
    assert any(e["type"] == TRANSFER and e["file"] == src.name and e["bytes"] == src.stat().st_size for e in events)
    local = _local("decompose", {"program": str(src), "to": "core", "output": str(tmp_path / "l" / "bn.core.pt2")},
                   tmp_path / "l")
    result = outcome.result or {}
    assert result["program"] == str(src)  # remote paths turned back into local ones
    assert result["output"] == str(out / "bn.core.pt2") and Path(result["mapping"]).parent == out
    for key in ("nodes_before", "nodes_after", "op_diff", "non_core_ops"):
        assert result[key] == local[key], key
    assert (out / "bn.core.pt2").stat().st_size > 0
    assert json.loads((out / "bn.core.mapping.json").read_text()).keys() == \
        json.loads((tmp_path / "l" / "bn.core.mapping.json").read_text()).keys()

    request = {"program": str(src), "device": "cpu", "inputs": "generated", "seed": 3, "warmup": 0, "runs": 1}
    run = worker_job(JobSpec("run_program", request, tmp_path / "run"), use_ssh_server.url)
    outcome = run.wait()
    assert outcome.ok, outcome.message
    assert run.uploaded == []  # the program and the worker code are already on the server: nothing copied again
    mine = _local("run_program", request, tmp_path / "run-local")
    strip = lambda outputs: [{k: v for k, v in o.items()} for o in outputs]  # noqa: E731
    assert strip((outcome.result or {})["outputs"]) == strip(mine["outputs"])


def _hanging_job(tmp_path: Path, events: list, lines: list) -> RemoteJob:  # type: ignore[type-arg]
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hang.py").write_text(HANGING_SCRIPT)
    job = worker_job(JobSpec("export_script", {"script": str(folder / "hang.py")}, tmp_path / "out",
                             on_event=events.append, on_output=lambda stream, line: lines.append(line)))
    assert isinstance(job, RemoteJob)
    job.start()
    assert _until(lambda: not job.poll() or any(line.startswith("ready") for line in lines), 120), job.outcome
    return job


def test_cancel_leaves_no_process_on_the_server(use_ssh_server: SshServer, tmp_path, monkeypatch):
    monkeypatch.setenv("PT2V_WORKER", use_ssh_server.url)
    events: list[dict] = []  # type: ignore[type-arg]
    lines: list[str] = []
    job = _hanging_job(tmp_path, events, lines)
    marker = job.remote["marker"]
    daemon = int(next(line for line in lines if line.startswith("ready")).split()[1])
    assert daemon in process_tree.marked_pids(marker)  # the script's setsid() child carries the job's marker
    job.cancel()
    assert job.outcome is not None and job.outcome.status == protocol.CANCELLED
    assert process_tree.marked_pids(marker) == []
    assert _until(lambda: not os.path.exists(f"/proc/{job.remote['pid']}"))  # the supervisor itself ended
    assert not Path(job.remote["job_dir"]).exists()  # and the job's folder on the server is gone


def test_a_killed_connection_is_reported_and_the_job_can_run_again(use_ssh_server: SshServer, pt2_path, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setenv("PT2V_WORKER", use_ssh_server.url)
    events: list[dict] = []  # type: ignore[type-arg]
    lines: list[str] = []
    job = _hanging_job(tmp_path, events, lines)
    marker, supervisor = job.remote["marker"], job.remote["pid"]
    with open(f"/proc/{supervisor}/stat") as f:
        sshd_session = int(f.read().rsplit(")", 1)[1].split()[1])  # the sshd process serving the connection
    os.kill(sshd_session, signal.SIGKILL)
    outcome = job.wait()
    assert outcome.status == DISCONNECTED
    assert "connection" in outcome.message and "run it again" in outcome.message
    assert _until(lambda: process_tree.marked_pids(marker) == [])  # the supervisor saw its stdin close
    assert _until(lambda: not Path(job.remote["job_dir"]).exists())
    src = pt2_path("batchnorm_train")
    again = worker_job(JobSpec("decompose", {"program": str(src), "output": str(tmp_path / "again" / "d.pt2")},
                               tmp_path / "again"))
    assert again.wait().ok, again.outcome


MODEL_SCRIPT = """\
import torch
from helper import Scale  # beside the script: the script's folder goes with it

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.s = Scale()

    def forward(self, x):
        return self.s(x).relu()

model = M()
example_args = (torch.randn(2, 3),)
"""
HELPER = """\
import torch

class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 2
"""


def test_numerics_and_export_over_ssh_give_what_a_local_worker_gives(use_ssh_server: SshServer, pt2_path,
                                                                      tmp_path, monkeypatch):
    monkeypatch.setenv("PT2V_WORKER", use_ssh_server.url)
    src = pt2_path("batchnorm_train")
    request = {"program": str(src), "candidate": "core", "inputs": "generated", "seed": 1}
    job = worker_job(JobSpec("numerics", request, tmp_path / "numerics"))
    outcome = job.wait()
    assert outcome.ok, outcome.message
    mine = _local("numerics", request, tmp_path / "numerics-local")
    theirs = outcome.result or {}
    assert theirs["ok"] and mine["ok"], (theirs.get("error"), mine.get("error"))
    for key in ("summary", "first_divergence", "nodes"):
        if key in mine:
            assert theirs[key] == mine[key], key

    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(MODEL_SCRIPT)
    (project / "helper.py").write_text(HELPER)
    export = worker_job(JobSpec("export_script", {"script": str(project / "model.py")}, tmp_path / "export"))
    outcome = export.wait()
    assert outcome.ok, outcome.message
    assert set(export.uploaded) == {"model.py", "helper.py"}  # the worker code was already there
    result = outcome.result or {}
    assert result["script_ok"] and result["exported"] == 1, result
    report = json.loads((tmp_path / "export" / "report.json").read_text())
    assert report["script"] == str(project / "model.py")  # the server's path turned back into the local one
    exported = tmp_path / "export" / report["calls"][0]["pt2"]
    assert exported.stat().st_size > 0  # the exported program came back into the job's local folder
    from pt2_viewer.core.pt2.reader import read_archive

    assert read_archive(exported).program().graph.nodes  # a real program, readable here without torch


def test_the_archive_check_runs_on_the_server_and_consent_travels_with_the_job(use_ssh_server: SshServer, pt2_path,
                                                                               tmp_path, monkeypatch):
    from tests import hostile_archives as hostile

    monkeypatch.setenv("PT2V_WORKER", use_ssh_server.url)
    payload = hostile.Payload.make(tmp_path / "payload")
    evil = hostile.build("pickled_weight", pt2_path("dynamic_shapes"), tmp_path / "archives", payload)
    refused = worker_job(JobSpec("run_program", {"program": str(evil), "warmup": 0, "runs": 1}, tmp_path / "refused"))
    outcome = refused.wait()
    error = (outcome.result or {}).get("error") or {}
    assert outcome.ok and error.get("kind") == "untrusted", outcome.result
    assert error.get("consent") and not payload.marker.exists()  # refused on the server before torch loaded it
    trusted = worker_job(JobSpec("run_program", {"program": str(evil), "warmup": 0, "runs": 1, "trust": True},
                                 tmp_path / "trusted"))
    trusted.wait()
    assert trusted.uploaded == [] and payload.marker.exists()  # the user's yes reached the server's loader


NO_TORCH = "import sys; sys.modules['torch'] = None; from pt2_viewer.app.cli import main; sys.exit(main(sys.argv[1:]))"


def _cli(server: SshServer, tmp_path: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`pt2-viewer ARGV` in a Python where `import torch` fails: the command line needs no torch of its own."""
    environ = {**os.environ, **server.environ(), "PT2V_WORKER_PYTHON": "/nonexistent/local/python",
               "XDG_CONFIG_HOME": str(tmp_path / "config"), **env}
    environ.pop("PT2V_WORKER", None)
    environ.update(env)
    return subprocess.run([sys.executable, "-c", NO_TORCH, *argv], capture_output=True, text=True, env=environ,
                          timeout=600, check=False)


def test_the_command_lines_take_worker_and_pt2v_worker(ssh_server: SshServer, pt2_path, tmp_path):
    src = pt2_path("batchnorm_train")
    done = _cli(ssh_server, tmp_path, "decompose", str(src), "--worker", ssh_server.url, "-o",
                str(tmp_path / "cli" / "bn.core.pt2"), "--json", "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == str(tmp_path / "cli" / "bn.core.pt2")
    assert (tmp_path / "cli" / "bn.core.pt2").is_file() and (tmp_path / "cli" / "bn.core.mapping.json").is_file()
    done = _cli(ssh_server, tmp_path, "run", str(src), "--json", "-q", "--runs", "1", "--warmup", "0",
                PT2V_WORKER=ssh_server.url)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outputs"]
    done = _cli(ssh_server, tmp_path, "run", str(src), "-q", "--worker", "/nonexistent/flag/python",
                PT2V_WORKER=ssh_server.url)  # --worker wins over PT2V_WORKER
    assert done.returncode != 0 and "/nonexistent/flag/python" in done.stderr
    done = _cli(ssh_server, tmp_path, "run", str(src), "-q", "--worker", "ssh://host-without-path")
    assert done.returncode != 0 and "absolute path" in done.stderr
    done = _cli(ssh_server, tmp_path, "numerics", str(src), "--candidate", "core", "--json", "-q",
                PT2V_WORKER=ssh_server.url)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"]
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(MODEL_SCRIPT)
    (project / "helper.py").write_text(HELPER)
    done = _cli(ssh_server, tmp_path, "export", str(project / "model.py"), "-o", str(tmp_path / "exported"), "-q",
                "--worker", ssh_server.url)
    assert done.returncode == 0, done.stderr + done.stdout
    assert json.loads((tmp_path / "exported" / "report.json").read_text())["script"] == str(project / "model.py")


def test_the_server_cache_keeps_to_its_cap_oldest_first_and_a_big_script_folder_is_refused(ssh_server: SshServer,
                                                                                           tmp_path):
    scratch = tmp_path / "scratch"  # not the other tests' cache
    files = scratch / "files"
    files.mkdir(parents=True, exist_ok=True)
    for age, name in enumerate(("newest", "middle", "oldest")):
        (files / name).write_bytes(b"x" * 1000)
        os.utime(files / name, (time.time() - 1000 * age, time.time() - 1000 * age))
    ssh = SshCommand.for_target(parse_worker_url(ssh_server.url), ssh_server.environ())
    answer = json.loads(ssh.run("gc", str(scratch), "2500").stdout)
    assert answer["removed"] >= 1 and not (files / "oldest").exists() and (files / "newest").exists()

    from pt2_viewer.core.jobs.remote.content import FolderTooBig, folder_files

    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text("print('hi')\n")
    (project / "weights.bin").write_bytes(b"0" * 5000)
    assert len(folder_files(project / "model.py", cap_bytes=10_000)) == 2
    with pytest.raises(FolderTooBig, match="Move the script into a folder of its own"):
        folder_files(project / "model.py", cap_bytes=1000)


MEMORY_EATER = """\
import subprocess, sys, time
eat = "import time; block = b'x' * (700 * 2**20); print('ate', flush=True); time.sleep(600)"
children = [subprocess.Popen([sys.executable, "-c", eat]) for _ in range(4)]
print("ready", flush=True)
time.sleep(600)
"""


def test_the_memory_limit_covers_the_server_s_whole_process_tree(use_ssh_server: SshServer, tmp_path, monkeypatch):
    monkeypatch.setenv("PT2V_WORKER", use_ssh_server.url)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "eat.py").write_text(MEMORY_EATER)
    job = worker_job(JobSpec("export_script", {"script": str(tmp_path / "project" / "eat.py")}, tmp_path / "out",
                             memory_limit_mb=2500))
    outcome = job.wait()
    assert outcome.status == protocol.OUT_OF_MEMORY, outcome.message
    assert "2,500 MB" in outcome.message
    assert process_tree.marked_pids(job.remote["marker"]) == []


def test_a_pte_runs_on_the_server_as_it_does_here(use_ssh_server: SshServer, tmp_path, monkeypatch):
    """The pipeline's jobs go the same way: an ExecuTorch .pte is copied by hash and run with the server's runtime."""
    pytest.importorskip("executorch", reason="executorch builds and runs the .pte test file (requirements-dev.txt)")
    from tests.programs import ExportFailed
    from tests.zoo import pipeline

    try:
        pte = pipeline.small_pte("portable")
    except ExportFailed as e:
        pytest.skip(str(e))
    monkeypatch.setenv("PT2V_WORKER", use_ssh_server.url)
    request = {"program": str(pte), "device": "cpu", "warmup": 0, "runs": 1}
    job = worker_job(JobSpec("run_pte", request, tmp_path / "pte"))
    outcome = job.wait()
    assert outcome.ok and (outcome.result or {}).get("ok"), (outcome.message, outcome.result)
    assert pte.name in job.uploaded and job.remote["python"] == use_ssh_server.python
    mine = _local("run_pte", request, tmp_path / "pte-local")
    assert [o["shape"] for o in (outcome.result or {})["outputs"]] == [o["shape"] for o in mine["outputs"]]
    assert (outcome.result or {})["outputs"][0]["max"] == mine["outputs"][0]["max"]
