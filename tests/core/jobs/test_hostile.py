"""Untrusted files: no code from a `.pt2` runs without consent, and every hostile input gets one clean message.

Each hostile archive is made in the test from one real exported program (tests/hostile_archives.py) and goes through
every command: `info`, `render`, `run`, `decompose` and the window's `--screenshot`. None may run its payload (the
marker file it would create must not exist), print a traceback or control characters, crash, hang or leave files in
the temporary folder. Hostile scripts go through `export`: signals, daemons, limits, a forged events channel.
"""
from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.archive_check import check_archive
from pt2_viewer.core.jobs.client import DEFAULT_TIMEOUT_S, WorkerJob, default_memory_mb, run_job
from pt2_viewer.core.jobs.expr_grammar import UnsafeExpression, check_expression
from pt2_viewer.core.jobs.loading import _weights_only_unpickling, load_program
from pt2_viewer.core.jobs.spec import JobSpec
from tests import hostile_archives as hostile
from tests.core.jobs.test_worker import dead_within
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)

BASE = "dynamic_shapes"
ENV = {"OMP_NUM_THREADS": "1"}
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# What the worker must answer for each hostile archive when not trusted: the failure kind, or "ok" (it loads, safely).
EXPECTED_KIND = {**{name: "untrusted" for name in hostile.CODE}, "aoti_part": "ok", "non_utf8_name": "load",
                 **{name: "load" for name in hostile.BROKEN if name != "non_utf8_name"}}
NAMES = sorted(hostile.ALL)
VIEWER_REFUSES = {"flipped_name_byte", "deep_json", "json_bomb", "zip64_size", "binary_archive_format"}


@pytest.fixture
def payload(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> hostile.Payload:
    p = hostile.Payload.make(tmp_path / "payload")
    monkeypatch.syspath_prepend(str(p.path))  # the module a hostile file names is installed, and importable
    # ... in the worker too: the command lines run their jobs there (core/cli/jobs.py)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(x for x in (str(p.path), os.environ.get("PYTHONPATH")) if x))
    return p


def make(name: str, pt2_path, tmp_path: Path, payload: hostile.Payload) -> Path:  # type: ignore[no-untyped-def]
    return hostile.build(name, pt2_path(BASE), tmp_path / "archives", payload)


def cli(*argv: str) -> tuple[int, str]:
    """`pt2-viewer ARGV` in this process: (exit status, stdout then stderr)."""
    rc, out, err = cli_streams(*argv)
    return rc, out + err


def cli_streams(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = cli_main(list(argv))
        except SystemExit as e:
            rc = int(e.code or 0)
    return rc, out.getvalue(), err.getvalue()


def assert_clean(rc: int, text: str, payload: hostile.Payload) -> None:
    assert not payload.marker.exists(), "the file's payload ran"
    assert "Traceback" not in text, text
    assert not CONTROL.search(text), f"control characters reached the terminal: {text!r}"
    if rc != 0:
        errors = [line for line in text.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and len(errors[0]) > 20, text


def aoti_litter() -> set[str]:
    import tempfile

    return {p.name for p in Path(tempfile.gettempdir()).glob("aotinductor_*")}


# --- the worker's check, through run and decompose ---------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_run_and_decompose_refuse_or_load_safely(name, pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    path = make(name, pt2_path, tmp_path, payload)
    litter = aoti_litter()
    rc, out, err = cli_streams("run", str(path), "--runs", "1", "--warmup", "0", "--json", "-q")
    assert_clean(rc, err, payload)  # --json prints the failure's detail (torch's traceback) inside the object
    assert not CONTROL.search(out)
    result = json.loads(out)
    kind = "ok" if result["ok"] else result["error"]["kind"]
    assert kind == EXPECTED_KIND[name], result.get("error")
    if kind == "untrusted":
        assert "--trust" in result["error"]["hint"] and result["error"]["consent"]
    rc, text = cli("decompose", str(path), "--to", "functional", "-o", str(tmp_path / "out.pt2"), "-q")
    assert_clean(rc, text, payload)
    assert (rc == 0) == (kind == "ok"), text
    assert aoti_litter() <= litter, "torch left an aotinductor_* folder in the temporary folder"


def test_refusals_say_what_was_found_and_how_to_proceed(pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    rc, text = cli("run", str(make("pickled_weight", pt2_path, tmp_path, payload)), "-q")
    assert rc == 1 and "posix.system" in text and "weight 'evil'" in text and "--trust" in text
    rc, text = cli("run", str(make("op_namespace", pt2_path, tmp_path, payload)), "-q")
    assert rc == 1 and f"import the module '{payload.module}'" in text and "custom-op namespace" in text
    rc, text = cli("decompose", str(make("sympy_expression", pt2_path, tmp_path, payload)), "-q")
    assert rc == 1 and "symbolic expression" in text and "__import__" in text


def test_trust_imports_the_modules_the_user_agreed_to(pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    path = make("pytree_type", pt2_path, tmp_path, payload)
    check = check_archive(path)
    assert check.imports == {payload.module: "for Inputs"}
    assert check.modules_to_allow() == [payload.module]  # on the import path, but no allowed library's: asks
    rc, _text = cli("run", str(path), "--trust", "-q")
    assert payload.marker.read_text() == "imported", "with --trust, the module the file names is imported"
    assert rc == 1  # the module registers no such type: torch's missing-type message follows


def test_allow_import_imports_that_module_and_nothing_more(pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    path = make("pytree_type", pt2_path, tmp_path, payload)
    rc, text = cli("run", str(path), "-q")
    assert rc == 1 and f"--allow-import {payload.module}" in text and not payload.marker.exists()
    rc, text = cli("run", str(path), "--allow-import", "some.other.module", "-q")
    assert rc == 1 and "not loaded" in text and not payload.marker.exists()
    rc, text = cli("run", str(path), "--allow-import", payload.module, "-q")
    assert payload.marker.read_text() == "imported" and "not registered" in text, text
    pickled = make("pickled_weight", pt2_path, tmp_path, payload)  # a module allowed is no licence to unpickle
    rc, text = cli("run", str(pickled), "--allow-import", "posix", "--allow-import", "os", "-q")
    assert rc == 1 and "posix.system" in text and "--trust" in text


def test_real_programs_need_no_trust(pt2_path):  # type: ignore[no-untyped-def]
    for name in ("dynamic_shapes", "topk_cond", "cond_map", "unbacked", "batchnorm_train", "two_programs"):
        check = check_archive(pt2_path(name))
        assert not check.needs_trust, (name, check.consent_items())
    loaded = load_program(pt2_path("dynamic_shapes"))
    assert loaded.sample_inputs is not None and not loaded.imported


def test_second_guard_forces_weights_only_inside_torchs_loader(tmp_path, payload):  # type: ignore[no-untyped-def]
    import pickle

    import torch

    data = hostile.evil_torch_save(lambda e: {"w": e}, payload)
    with _weights_only_unpickling(), pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=False)
    assert not payload.marker.exists()
    assert torch.load is not None and torch.load.__name__ == "load"


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "Symbol('s0').__class__", "eval('1')", "Symbol('s0', integer=lambda: 1)",
    "Pow(Integer(9), Integer(99999999))", "Integer(" + "9" * 100 + ")", "Add(" * 200 + "1" + ")" * 200,
    "sympify('1')", "[s0 for s0 in ()]", "Symbol('a b')", "Float('1e5; import os')", "s0[0]",
])
def test_expression_grammar_refuses_what_torch_never_writes(text):  # type: ignore[no-untyped-def]
    with pytest.raises(UnsafeExpression):
        check_expression(text)


def test_expression_grammar_accepts_what_torch_writes():
    for text in ["Symbol('s77', positive=True, integer=True)", "Add(Symbol('s0', integer=True), Integer(-1))",
                 "FloorDiv(Mul(Integer(2), Symbol('s1')), Integer(3))", "StrictLessThan(Symbol('u0'), IntInfinity())",
                 "Eq(PythonMod(Symbol('s0'), Integer(8)), Integer(0))", "Float('1.5', precision=53)", "true",
                 "s0 + 2*s1 <= 8", "Max(Integer(1), Pow(Symbol('s2'), Integer(2)))", "OpaqueUnaryFn_sqrt(s0)"]:
        check_expression(text)


# --- the viewer, through info, render and --screenshot ----------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_info_and_render_answer_in_one_clean_line(name, pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    path = make(name, pt2_path, tmp_path, payload)
    rc, text = cli("info", str(path))
    assert not payload.marker.exists() and "Traceback" not in text
    assert not CONTROL.search(text), repr(text)
    if name not in VIEWER_REFUSES:
        assert rc == 0, text
        rc, text = cli("render", str(path), "-o", str(tmp_path / "g.svg"))
        assert rc == 0 and (tmp_path / "g.svg").stat().st_size > 0, text
    else:
        assert rc != 0 and len(text.strip().splitlines()) == 1, text


@pytest.mark.parametrize("name",
                         ["nan_range", "infinite_range", "inverted_range", "pickled_weight", "sympy_expression"])
def test_screenshot_opens_hostile_programs_without_running_or_hanging(name, pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    path = make(name, pt2_path, tmp_path, payload)
    shot = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": f"{payload.path}{os.pathsep}{REPO_ROOT}"}
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", str(path), "--screenshot", str(shot), "--new-instance"],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.stat().st_size > 0, run.stderr
    assert "Traceback" not in run.stderr and not payload.marker.exists()


def test_too_many_members_is_refused_quickly(pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    path = hostile.many_members(pt2_path(BASE), tmp_path / "many.pt2", payload)
    rc, text = cli("run", str(path), "-q")
    assert rc == 1 and "100,001 members" not in text and "members, more than" in text
    assert_clean(rc, text, payload)


# --- hostile scripts, through export -----------------------------------------------------------------------------

def write_script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "hostile_script.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return script


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signals_to_export_end_the_worker_too(sig, tmp_path, qtbot):  # type: ignore[no-untyped-def]
    pid_file = tmp_path / "pid"
    script = write_script(tmp_path, f"""
        import os, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        while True:
            time.sleep(0.05)
    """)
    command = subprocess.Popen([sys.executable, "-m", "pt2_viewer", "export", str(script), "-o", str(tmp_path / "out")],
                               cwd=REPO_ROOT, env={**os.environ, **ENV}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    qtbot.waitUntil(lambda: pid_file.exists() and pid_file.read_text().isdigit(), timeout=60_000)
    worker = int(pid_file.read_text())
    command.send_signal(sig)
    _out, err = command.communicate(timeout=30)
    assert command.returncode == 130 and "cancelled" in err and "Traceback" not in err
    assert dead_within(worker, 5.0), "the worker outlived the command"


def test_a_setsid_daemon_does_not_survive_its_job(tmp_path):  # type: ignore[no-untyped-def]
    pid_file = tmp_path / "daemon.pid"
    script = write_script(tmp_path, f"""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open({str(pid_file)!r} + ".tmp", "w").write(str(os.getpid()))
                os.rename({str(pid_file)!r} + ".tmp", {str(pid_file)!r})
                while True:
                    time.sleep(0.05)
            os._exit(0)
        while not os.path.exists({str(pid_file)!r}):
            time.sleep(0.01)
    """)
    job, outcome = run_job("export_script", {"script": str(script)}, tmp_path / "out", env=ENV, timeout_s=120)
    assert outcome.status == protocol.OK, outcome.message
    assert dead_within(int(pid_file.read_text()), 2.0), "the daemon outlived the job"


def test_jobs_have_default_limits_the_user_can_change(tmp_path):  # type: ignore[no-untyped-def]
    job = WorkerJob(JobSpec("export_script", {}, tmp_path))
    assert job.timeout_s == DEFAULT_TIMEOUT_S and job.tree_memory_mb == default_memory_mb()
    job = WorkerJob(JobSpec("export_script", {}, tmp_path, timeout_s=0, memory_limit_mb=0))
    assert job.timeout_s is None and job.tree_memory_mb is None
    assert WorkerJob(JobSpec("export_script", {}, tmp_path, timeout_s=5, memory_limit_mb=900)).tree_memory_mb == 900


def test_memory_limit_covers_children_that_left_the_group(tmp_path):  # type: ignore[no-untyped-def]
    pid_file = tmp_path / "eater.pid"
    eater = tmp_path / "eater.py"  # leaves the group and lifts its own address-space limit: only the tree sum stops it
    eater.write_text(textwrap.dedent(f"""
        import os, resource, time
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        hoard = []
        while True:
            hoard.append(bytearray(64 << 20))
            time.sleep(0.02)
    """), encoding="utf-8")
    script = write_script(tmp_path, f"""
        import subprocess, sys
        subprocess.Popen([sys.executable, {str(eater)!r}]).wait()
    """)
    job, outcome = run_job("export_script", {"script": str(script)}, tmp_path / "out", env=ENV, timeout_s=120,
                           memory_limit_mb=1500)
    assert outcome.status == protocol.OUT_OF_MEMORY and "1,500 MB" in outcome.message
    assert dead_within(int(pid_file.read_text()), 2.0)


def test_a_forged_events_channel_cannot_make_export_read_other_files(tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    script = write_script(tmp_path, """
        import json, os, stat
        argv = open("/proc/self/cmdline", "rb").read().decode().split("\\0")
        out = argv[argv.index("--out") + 1]  # the job's own folder (the command's -o gets only what it delivers)
        json.dump({"report": "/etc/passwd"}, open(os.path.join(out, "result.json"), "w"))
        for fd in range(3, 64):
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    os.write(fd, b'{"type": "progress", "fraction": "lots", "message": 3}\\n')
                    os.write(fd, b'{"type": "done", "result": "/etc/passwd"}\\n' + b"[" * 100000 + b"\\n")
                    os.write(fd, b'{"type": "done", "result": "result.json"}\\n')
            except OSError:
                pass
        os._exit(0)
    """)
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", "export", str(script), "-o", str(out)], cwd=REPO_ROOT,
                         env={**os.environ, **ENV}, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert "root:" not in run.stdout + run.stderr
    assert "report.json" in run.stderr and "malformed" in run.stderr


# --- the window: a refusal becomes a question, and a yes runs the job again with trust ---------------------------

@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_window_reruns_a_refused_job_once_the_file_is_trusted(qtbot, pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QWidget

    from pt2_viewer.app.jobs.driver import WorkerDriver
    from pt2_viewer.core.platform.trust import TrustStore

    owner = QWidget()
    qtbot.addWidget(owner)
    owner.interactive = False  # type: ignore[attr-defined]  (no dialog in tests: only a stored yes counts)
    owner.trust = TrustStore(tmp_path / "trusted.json")  # type: ignore[attr-defined]
    driver = WorkerDriver(owner)
    path = make("pytree_type", pt2_path, tmp_path, payload)
    options = {"env": {**ENV, "PYTHONPATH": str(payload.path)}}
    with qtbot.waitSignal(driver.finished, timeout=120_000) as refused:
        driver.start("run_program", {"program": str(path)}, tmp_path / "job1", **options)
    error = refused.args[0].result["error"]
    assert error["kind"] == "untrusted" and any(payload.module in item for item in error["consent"])
    assert not payload.marker.exists()

    assert error["modules"] == [payload.module]  # only a module to import: the question is about that module

    owner.trust.allow_modules("/some/other/python", [payload.module])  # type: ignore[attr-defined]
    with qtbot.waitSignal(driver.finished, timeout=120_000) as other_python:
        driver.start("run_program", {"program": str(path)}, tmp_path / "job2", **options)
    assert other_python.args[0].result["error"]["kind"] == "untrusted"  # a yes is per worker Python
    assert not payload.marker.exists()

    from pt2_viewer.core.jobs.python_env import choose_worker_python

    # what answering Yes to "Import these modules?" stores
    owner.trust.allow_modules(choose_worker_python().path, [payload.module])  # type: ignore[attr-defined]
    with qtbot.waitSignal(driver.finished, timeout=120_000) as rerun:
        driver.start("run_program", {"program": str(path)}, tmp_path / "job3", **options)
    assert rerun.args[0].result["error"]["kind"] == "missing_type"  # the module was imported, registering nothing
    assert payload.marker.read_text() == "imported"


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_window_reruns_a_refused_job_once_the_whole_file_is_trusted(qtbot, pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QWidget

    from pt2_viewer.app.jobs.driver import WorkerDriver
    from pt2_viewer.core.platform.trust import TrustStore

    owner = QWidget()
    qtbot.addWidget(owner)
    owner.interactive = False  # type: ignore[attr-defined]
    owner.trust = TrustStore(tmp_path / "trusted.json")  # type: ignore[attr-defined]
    driver = WorkerDriver(owner)
    path = make("pytree_type", pt2_path, tmp_path, payload)
    owner.trust.trust(path)  # type: ignore[attr-defined]  (what answering Yes to "Load code from this program?" stores)
    with qtbot.waitSignal(driver.finished, timeout=120_000) as rerun:
        driver.start("run_program", {"program": str(path)}, tmp_path / "job",
                     env={**ENV, "PYTHONPATH": str(payload.path)})
    assert rerun.args[0].result["error"]["kind"] == "missing_type"  # loaded with trust: the module was imported
    assert payload.marker.read_text() == "imported"


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_closing_the_owner_of_a_running_job_ends_its_process_tree(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QWidget
    from shiboken6 import delete

    from pt2_viewer.app.jobs.driver import WorkerDriver

    owner = QWidget()
    driver = WorkerDriver(owner)
    script = write_script(tmp_path, """
        import time
        while True:
            time.sleep(0.05)
    """)
    job = driver.start("export_script", {"script": str(script)}, tmp_path / "out", env=ENV)
    qtbot.waitUntil(lambda: job.pid is not None, timeout=10_000)
    worker = job.pid
    delete(owner)  # a tab or dialog closed without cancelling its job
    assert job.outcome is not None and job.outcome.status == protocol.CANCELLED
    assert dead_within(worker, 2.0)


# --- the import policy: which modules a file may make the worker import (core/jobs/import_policy.py) -------------

def _fake_site(tmp_path: Path) -> tuple[Path, Path]:
    """A site-packages folder with one distribution, `pt2vfake` (package `pt2vfake`, and `pt2vns/real.py` of the
    namespace package `pt2vns`), whose `.pth` puts another folder on sys.path holding `pt2vpth.py` and a second
    `pt2vns` portion with `evil.py`; and `pt2vfake/planted.py`, in the package's folder but in no RECORD."""
    site_dir, other = tmp_path / "site-packages", tmp_path / "elsewhere"
    for folder in (site_dir / "pt2vfake", site_dir / "pt2vns", other / "pt2vns"):
        folder.mkdir(parents=True)
    for file in ("pt2vfake/__init__.py", "pt2vfake/outputs.py", "pt2vfake/planted.py", "pt2vns/real.py"):
        (site_dir / file).write_text("", encoding="utf-8")
    dist = site_dir / "pt2vfake-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pt2vfake\nVersion: 1.0\n", encoding="utf-8")
    (dist / "top_level.txt").write_text("pt2vfake\npt2vns\n", encoding="utf-8")
    (dist / "RECORD").write_text("pt2vfake/__init__.py,,\npt2vfake/outputs.py,,\npt2vns/real.py,,\n"
                                 "pt2vfake-1.0.dist-info/RECORD,,\n", encoding="utf-8")
    (site_dir / "pt2vfake.pth").write_text(f"{other}\n", encoding="utf-8")
    return site_dir, other


def test_names_that_resolve_outside_site_packages_are_not_allowed(pt2_path, tmp_path, monkeypatch, payload):  # type: ignore[no-untyped-def]
    import site

    from pt2_viewer.core.jobs import import_policy
    from pt2_viewer.core.jobs.errors import JobFailure

    site_dir, other = _fake_site(tmp_path)
    for module in ("pt2vns.evil", "pt2vpth"):  # each would run the payload if imported
        (other / f"{module.replace('.', '/')}.py").write_text(
            f"open({str(payload.marker)!r}, 'w').write('imported')\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))
    site.addsitedir(str(site_dir))  # what Python does at start-up: the .pth puts `elsewhere` on sys.path
    assert str(other) in sys.path
    real_sites = import_policy.site_dirs()
    monkeypatch.setattr(import_policy, "site_dirs", lambda: (site_dir.resolve(), *real_sites))
    monkeypatch.setitem(import_policy.ALLOWED_DISTRIBUTIONS, "pt2vfake", "a library of this test")

    def status(module: str) -> str:
        return import_policy.decide(module, "for T").status

    assert status("pt2vfake.outputs") == import_policy.ALLOWED
    assert import_policy.resolve("pt2vfake.outputs").version == "1.0"
    assert status("pt2vns.real") == import_policy.ALLOWED
    assert status("pt2vns.evil") == import_policy.CONSENT  # the namespace package's portion outside site-packages
    assert status("pt2vpth") == import_policy.CONSENT  # on sys.path through a .pth, in no distribution
    assert status("pt2vfake.planted") == import_policy.CONSENT  # in the package's folder, not in its RECORD
    assert status("pt2vfake.missing") == import_policy.MISSING
    assert "pt2vfake" not in sys.modules  # resolving ran nothing

    for module in ("pt2vns.evil", "pt2vpth"):
        path = hostile.named_type(pt2_path(BASE), tmp_path / f"{module}.pt2", f"{module}.Inputs")
        with pytest.raises(JobFailure) as refused:
            load_program(path)
        assert refused.value.failure.kind == "untrusted" and refused.value.failure.modules == [module]
    assert not payload.marker.exists() and "pt2vns" not in sys.modules and "pt2vpth" not in sys.modules


@pytest.mark.parametrize("module", ["antigravity", "this"])
def test_an_installed_module_with_import_side_effects_is_asked_for(module, pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    assert module not in sys.modules
    path = hostile.named_type(pt2_path(BASE), tmp_path / f"{module}.pt2", f"{module}.Inputs")
    rc, out, err = cli_streams("run", str(path), "--json", "-q")
    error = json.loads(out)["error"]
    assert rc == 1 and error["kind"] == "untrusted" and error["modules"] == [module]
    assert f"--allow-import {module}" in error["hint"] and "the standard library" in error["consent"][0]
    assert module not in sys.modules, "resolving the name imported it"


def test_a_module_beside_the_file_or_in_the_working_directory_is_never_imported(pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "download"
    folder.mkdir()
    module = f"pt2v_beside_{os.getpid()}"
    marker = tmp_path / "PWNED"
    (folder / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n", encoding="utf-8")
    path = hostile.named_type(pt2_path(BASE), folder / "model.pt2", f"{module}.Inputs")
    # the command line run from that folder (`python -m` puts it first on sys.path) ...
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", "run", "model.pt2", "-q"], cwd=folder,
                         env={**os.environ, **ENV}, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"needs the package that defines {module}" in run.stderr and "pip install" in run.stderr, run.stderr
    # ... and a worker started there
    _, outcome = run_job("run_program", {"program": str(path)}, tmp_path / "out", cwd=str(folder), env=ENV,
                         timeout_s=300)
    assert outcome.result is not None and outcome.result["error"]["kind"] == "missing_type", outcome.message
    assert not marker.exists()


def test_a_folder_named_like_an_allowed_library_in_the_working_directory_is_not_imported(pt2_path, tmp_path):  # type: ignore[no-untyped-def]
    import transformers

    work = tmp_path / "work"
    (work / "transformers").mkdir(parents=True)
    marker = tmp_path / "PWNED"
    for name in ("__init__.py", "modeling_outputs.py"):
        (work / "transformers" / name).write_text(f"open({str(marker)!r}, 'w').write('imported')\n",
                                                 encoding="utf-8")
    bert = pt2_path("hf_tiny_bert")
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", "run", str(bert), "--runs", "1", "--warmup", "0",
                          "--json", "-q"], cwd=work, env={**os.environ, **ENV}, capture_output=True, text=True,
                         timeout=300)
    result = json.loads(run.stdout)
    assert result["ok"], result.get("error")
    assert result["imports"][0]["distribution"] == "transformers"
    assert result["imports"][0]["version"] == transformers.__version__
    _, outcome = run_job("run_program", {"program": str(bert), "runs": 1, "warmup": 0}, tmp_path / "out",
                         cwd=str(work), env=ENV, timeout_s=300)
    assert outcome.result is not None and outcome.result["ok"], outcome.message
    assert not marker.exists(), "the working directory's transformers/ was imported"


def test_the_file_loaded_is_the_file_that_was_checked(pt2_path, tmp_path, payload, monkeypatch):  # type: ignore[no-untyped-def]
    import shutil

    from pt2_viewer.core.jobs import loading
    from pt2_viewer.core.jobs.errors import JobFailure

    path = tmp_path / "model.pt2"
    shutil.copy(pt2_path(BASE), path)
    evil = make("sympy_expression", pt2_path, tmp_path, payload)  # torch would evaluate its size as Python
    checked = loading.check_archive

    def check_then_swap(*args, **kwargs):  # type: ignore[no-untyped-def]
        check = checked(*args, **kwargs)
        os.replace(evil, path)  # the file is replaced between the check and torch's load
        return check

    monkeypatch.setattr(loading, "check_archive", check_then_swap)
    loaded = load_program(path)
    assert not payload.marker.exists(), "torch loaded the swapped file"
    assert loaded.sample_inputs is not None
    monkeypatch.setattr(loading, "check_archive", checked)
    with pytest.raises(JobFailure) as refused:  # what is at the path now is refused on its own
        load_program(path)
    assert refused.value.failure.kind == "untrusted"


def test_a_file_changed_in_place_while_it_loads_is_refused(pt2_path, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    import shutil

    from pt2_viewer.core.jobs import loading
    from pt2_viewer.core.jobs.errors import JobFailure

    path = tmp_path / "model.pt2"
    shutil.copy(pt2_path(BASE), path)
    checked = loading.check_archive

    def check_then_rewrite(*args, **kwargs):  # type: ignore[no-untyped-def]
        check = checked(*args, **kwargs)
        data = path.read_bytes()
        with open(path, "r+b") as f:  # the same file (inode), written again: a download still in progress
            f.write(data)
        return check

    monkeypatch.setattr(loading, "check_archive", check_then_rewrite)
    with pytest.raises(JobFailure) as refused:
        load_program(path)
    assert refused.value.failure.kind == "load" and "changed while it was being loaded" in refused.value.failure.message


def test_native_code_needs_its_own_consent(pt2_path, tmp_path, payload):  # type: ignore[no-untyped-def]
    from pt2_viewer.core.jobs.errors import JobFailure
    from pt2_viewer.core.jobs.loading import require_native, trust_options
    from pt2_viewer.core.jobs.schemas.run import RunRequest

    check = check_archive(make("aoti_part", pt2_path, tmp_path, payload))
    assert not check.needs_trust  # its programs load without it: the AOTInductor part is never loaded for them
    with pytest.raises(JobFailure) as refused:
        require_native(check, allow_native=trust_options(RunRequest(allow_imports=["x"]))["allow_native"])
    assert refused.value.failure.kind == "untrusted_native" and "--allow-native" in refused.value.failure.hint
    require_native(check, allow_native=trust_options(RunRequest(allow_native=True))["allow_native"])
    require_native(check, allow_native=trust_options(RunRequest(trust=True))["allow_native"])  # --trust: all of them
    assert not payload.marker.exists()


def test_trust_options_read_the_three_kinds_from_a_request() -> None:
    from pt2_viewer.core.jobs.loading import trust_options
    from pt2_viewer.core.jobs.schemas.base import SchemaError
    from pt2_viewer.core.jobs.schemas.run import RunRequest

    assert trust_options(RunRequest.from_json({})) == {"trusted": False, "allow_imports": [], "allow_native": False}
    # only `true` is trust: a request that says it otherwise does not read (the worker's `request` failure)
    for bad, field in (({"trust": "yes"}, "trust"), ({"allow_imports": ["a", 3]}, "allow_imports"),
                       ({"allow_native": 1}, "allow_native")):
        with pytest.raises(SchemaError, match=field):
            RunRequest.from_json(bad)


def test_an_enum_module_only_in_the_working_directory_is_never_imported(pt2_path, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    from pt2_viewer.core.jobs.errors import JobFailure

    p = hostile.Payload.make(tmp_path / "payload")  # its module is in no folder on the import path
    path = hostile.build("enum_context", pt2_path(BASE), tmp_path / "archives", p)
    monkeypatch.chdir(p.path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])  # as `python -c` starts: the working directory first
    with pytest.raises(JobFailure) as refused:  # torch would import the enum's module itself: it stops first
        load_program(path)
    assert refused.value.failure.kind == "missing_module" and "pip install" in refused.value.failure.message
    assert not p.marker.exists() and p.module not in sys.modules


def test_the_worker_starts_without_the_working_directory_on_its_import_path(tmp_path):  # type: ignore[no-untyped-def]
    from pt2_viewer.core.jobs import python_env

    (tmp_path / "pt2v_cwd_module.py").write_text("", encoding="utf-8")
    code = "import importlib.util, sys; print(sys.flags.safe_path, importlib.util.find_spec('pt2v_cwd_module') is None)"

    def answer(env: dict[str, str]) -> list[str]:
        return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60, check=True).stdout.split()

    plain = {k: v for k, v in os.environ.items() if k != python_env.SAFE_PATH_ENV}
    assert answer(plain) == ["False", "False"]  # a plain `python -c` finds the folder's module: the test can fail
    assert answer(python_env.worker_environment(plain)) == ["True", "True"]
