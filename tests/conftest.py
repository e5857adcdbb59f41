"""Test-wide set-up: Qt runs offscreen, and settings, caches and trust decisions go to a private temporary home so
tests never touch (or depend on) the user's own files.

Two things outlive a run, on purpose (tests/README.md):
- Graphviz layouts go to the per-user fixture folder's `test-layouts/` (tests/fixture_root.py;
  `$PT2V_CACHE_DIR/layout` links there; the viewer's other caches start empty), a cache kept between runs and
  checkouts: a program laid out once is not laid out again. The tests of the layout cache itself use their own
  folders (tmp_path); a test that needs a cold cache asks for `cold_layout_cache`.
- The fixtures (`make fixtures`, scripts/build_fixtures.py) and torch's stored answers: per checkout under `.cache/`
  those that name this checkout's files, per user the rest (tests/fixture_root.py).

Tiers: `pytest_collection_modifyitems` marks each test by what it and the fixtures it uses reach, so `make test-fast`
can leave the costly ones out (`-m "not slow and not zoo and not ssh and not worker"`): `window` (a Qt window or
qtbot), `worker` (a worker or another Python process: the test's code, a fixture's, or a helper of their module names
`run_job`, `WarmPool`, `subprocess.run`...), `zoo` (a zoo program or a file made from one), `ssh` (the test's own
sshd). `TIER_FIXTURES` and `TIER_ENTRY_POINTS` below list what counts.
"""
from __future__ import annotations

import os
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import file_order
from tests.fixture_root import SHARED_FIXTURE_ROOT

_home = tempfile.mkdtemp(prefix="pt2v-test-home-")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_home, "config")
os.environ["XDG_CACHE_HOME"] = os.path.join(_home, "cache")
os.environ["XDG_DATA_HOME"] = os.path.join(_home, "data")
os.environ["XDG_RUNTIME_DIR"] = os.path.join(_home, "runtime")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
# The viewer's caches (`$PT2V_CACHE_DIR`) start empty, but for layouts: `layout/` links to a folder kept between runs.
LAYOUT_CACHE = SHARED_FIXTURE_ROOT / "test-layouts"  # tests/fixture_root.py: keyed by shape, kept per user
LAYOUT_CACHE.mkdir(parents=True, exist_ok=True)
os.makedirs(os.path.join(_home, "pt2v-cache"))
os.symlink(LAYOUT_CACHE, os.path.join(_home, "pt2v-cache", "layout"))
os.environ["PT2V_CACHE_DIR"] = os.path.join(_home, "pt2v-cache")  # core/layout/cache.py: $PT2V_CACHE_DIR/layout

from tests.programs import ExportFailed, code_names, pt2_path  # noqa: E402,F401  (pt2_path: the shared fixture)

if TYPE_CHECKING:
    from pt2_viewer.core.jobs.warm import WarmPool


@pytest.fixture(autouse=True)
def _fresh_settings() -> None:
    """Each test starts with none of the window's settings (splitter sizes, the minimap, weights as nodes...): a
    window an earlier test closed in this process must not size this one's panels (with pytest-xdist, which tests
    share a process changes from run to run)."""
    from PySide6.QtCore import QSettings

    QSettings("pt2-viewer", "PT2 Viewer").clear()


@pytest.fixture
def window(qtbot):  # type: ignore[no-untyped-def]
    """A main window for Qt tests: non-interactive (no modal dialogs), shown offscreen, closed after the test."""
    from pt2_viewer.app.main_window import MainWindow

    w = MainWindow(interactive=False)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w


@pytest.fixture
def cold_layout_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty layout cache of the test's own, for a test about laying out from scratch."""
    monkeypatch.setenv("PT2V_CACHE_DIR", str(tmp_path / "pt2v-cache"))
    return tmp_path / "pt2v-cache" / "layout"


@pytest.fixture
def warm_pool() -> Iterator[WarmPool]:
    """A pool of warm workers for a test that is not about a process's life: its jobs on one program share one worker
    (core/jobs/warm.py), which loads torch and the program once. Every worker ends with the test."""
    from pt2_viewer.core.jobs.warm import WarmPool

    pool = WarmPool(idle_timeout_s=300, enabled=True)
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def zoo_program() -> Callable[[str], Path]:
    """`zoo_program("llama.decomposed")` -> the zoo's cached archive (tests/zoo/cache.py; `make fixtures` builds it);
    fails the test, naming torch's reason, if torch no longer exports a program it exported before."""
    from tests.zoo.cache import program_by_id, zoo_path

    def get(program_id: str) -> Path:
        try:
            return zoo_path(program_by_id(program_id))
        except ExportFailed as e:
            pytest.fail(f"torch exported {program_id} before; now: {e.reason}")

    return get


# --------------------------------------------------------------------------------------------------------------------
# Tiers.

TESTS = Path(__file__).resolve().parent
TIER_FIXTURES = {  # a test using one of these fixtures (directly or through another fixture) is in that tier
    "window": {"window", "qtbot"},
    "ssh": {"ssh_server", "use_ssh_server"},
}
TIER_ENTRY_POINTS = {  # a test, or a fixture it uses, whose code (or a helper of its module) names one of these
    "worker": [("pt2_viewer.core.jobs.client", ("run_job", "WorkerJob")),
               ("pt2_viewer.core.jobs.warm", ("WarmPool", "WarmJob")),
               ("pt2_viewer.core.cli.jobs", ("run_in_worker", "run_job_command")),
               ("pt2_viewer.app.cli", ("main",)),  # the command line in-process: run, decompose... start workers
               ("pt2_viewer.core.layout", ("LayoutService", "LayoutClient")),
               ("subprocess", ("run", "Popen", "check_output", "check_call")),
               ("pt2_viewer.core.jobs.python_env", ("probe_python",)),  # runs the Python it asks about
               ("nbclient", ("NotebookClient",)),  # a Jupyter kernel
               ("tests.core.export.doctor_runs", ("diagnosed", "export"))],
    "zoo": [("tests.zoo.cache", ("zoo_path",)),
            ("tests.deploy_programs", ("lowered", "lowered_or_skip", "source_path")),
            ("tests.zoo.pipeline", ("pte_path", "aoti_path", "small_pte", "small_pt2", "source_pt2")),
            ("tests.aoti_package", ("package_path",))],
}


def _is_entry_point(found: object, names: set[str], entry_points: list[tuple[str, tuple[str, ...]]]) -> bool:
    """`found` (what a name of the code refers to) is one of `entry_points`: the function or class itself (by module
    and name, so a test module imported under two names still matches), or a module whose entry point the code
    names too (`subprocess.run`)."""
    for module, functions in entry_points:
        if isinstance(found, types.ModuleType):
            if found.__name__ == module and names & set(functions):
                return True
        elif getattr(found, "__name__", None) in functions and (
                str(getattr(found, "__module__", "")) + ".").startswith(module + "."):
            return True  # defined in that module or in one of its package's
    return False


def _names_one_of(function: object, entry_points: list[tuple[str, tuple[str, ...]]], seen: set[int]) -> bool:
    """True when `function`'s code names one of `entry_points`: through its module's names, a local import
    (`from tests.zoo.pipeline import pte_path` inside the function) or a function of its own module it calls."""
    code = getattr(function, "__code__", None)
    namespace = getattr(function, "__globals__", {})
    if code is None or id(function) in seen:
        return False
    seen.add(id(function))
    names = code_names(code)
    if any(module in names and names & set(functions) for module, functions in entry_points):
        return True  # imported inside the function
    for name in names:
        found = namespace.get(name)
        if found is None:
            continue
        if _is_entry_point(found, names, entry_points):
            return True
        if (isinstance(found, types.FunctionType) and found.__module__ == namespace.get("__name__")
                and _names_one_of(found, entry_points, seen)):
            return True
    return False


def _own_functions(item: pytest.Item) -> list[object]:
    """The test function and the functions of the project's fixtures it uses (not pytest's or a plugin's)."""
    functions: list[object] = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for definition in (info.name2fixturedefs.get(name, ()) if info else ()):
            func = getattr(definition, "func", None)
            code = getattr(func, "__code__", None)
            if code is not None and Path(code.co_filename).resolve().is_relative_to(TESTS):
                functions.append(func)
    return [f for f in functions if f is not None]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        tiers = {tier for tier, fixtures in TIER_FIXTURES.items() if used & fixtures}
        functions = _own_functions(item)
        tiers |= {tier for tier, entry_points in TIER_ENTRY_POINTS.items()
                  if any(_names_one_of(f, entry_points, set()) for f in functions)}
        for tier in sorted(tiers):
            item.add_marker(getattr(pytest.mark, tier))
    file_order.longest_files_first(items)  # tests/file_order.py: no process finishes a heavy file alone


# --------------------------------------------------------------------------------------------------------------------
# A test that starts a torch worker is in the `worker` tier. What a test reaches through the window (opening a script
# exports it in a worker) cannot be read from its code, so the tier is also checked as the test runs: every test that
# starts a worker process (core/jobs/client.py `start_worker_process`, the one place one is started) without the
# `worker` mark is listed at the end of the run, and in a run that leaves the tier out (`make test-fast`) it fails,
# naming the mark to add (`@pytest.mark.worker`, or `pytestmark` for its module).

UNMARKED_WORKER_TESTS: list[str] = []


def _excludes_workers(config: pytest.Config) -> bool:
    return "not worker" in " ".join(str(config.getoption("markexpr") or "").split())


@pytest.fixture(autouse=True)
def _worker_tier_check(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if request.node.get_closest_marker("worker") is not None:
        yield
        return
    from pt2_viewer.core.jobs import client, warm

    started: list[list[str]] = []
    real = client.start_worker_process

    def start_worker_process(command: list[str], **kwargs: object):  # type: ignore[no-untyped-def]
        started.append(command)
        return real(command, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(client, "start_worker_process", start_worker_process)
    monkeypatch.setattr(warm, "start_worker_process", start_worker_process)
    yield
    if started:
        request.node.user_properties.append(("unmarked_worker", len(started)))  # read by the run's controller
        if _excludes_workers(request.config):
            pytest.fail(f"this test started {len(started)} worker process(es) but is not marked `worker`, so a run "
                        "that leaves that tier out (make test-fast) still pays for them: add @pytest.mark.worker "
                        "to it (or to its module's pytestmark)", pytrace=False)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collects the unmarked tests and each file's time where the summary is written (with pytest-xdist, the
    controller)."""
    file_order.record(report)
    if report.when == "teardown" and any(name == "unmarked_worker" for name, _ in report.user_properties):
        UNMARKED_WORKER_TESTS.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    if UNMARKED_WORKER_TESTS:
        write = terminalreporter.write_line
        write(f"{len(UNMARKED_WORKER_TESTS)} test(s) started a worker without the `worker` mark (add it):")
        for nodeid in UNMARKED_WORKER_TESTS:
            write(f"  {nodeid}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, or a run without pytest-xdist
        file_order.write_recorded()
