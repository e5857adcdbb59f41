"""From the window: a program's Run and Decompose jobs share its warm worker, so the second job does not load the
program again (the jobs' `program_loaded` events say so), and closing the last tab showing the program ends the
worker. Offscreen;
every wait is on a signal or a condition."""
from __future__ import annotations

from PySide6.QtCore import Qt

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.decompose.dialog import DecomposeDialog
from pt2_viewer.app.jobs.driver import warm_pool
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.jobs.warm import WarmJob
from tests.app.run.test_run_panel import JOB_TIMEOUT, mlp, open_run_tab  # noqa: F401  (mlp is a fixture)
from tests.core.jobs.test_worker import dead_within


def reused(job) -> list[bool]:  # type: ignore[no-untyped-def]
    return [e["reused"] for e in job.events if e["type"] == "program_loaded"]


def test_run_then_decompose_load_the_program_once_and_closing_the_tab_ends_the_worker(  # type: ignore[no-untyped-def]
        qtbot, window: MainWindow, mlp) -> None:  # noqa: F811
    doc, panel = open_run_tab(qtbot, window, mlp)
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0].ok
    first = panel.driver.job
    assert isinstance(first, WarmJob) and reused(first) == [False]

    dialog = window.decompose_dialog()
    assert isinstance(dialog, DecomposeDialog)
    with qtbot.waitSignal(dialog.decomposed, timeout=JOB_TIMEOUT):
        dialog.start()
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), CompareView), timeout=JOB_TIMEOUT)
    compare = window.tabs.currentWidget()  # its models were built off the GUI thread
    qtbot.waitUntil(lambda: all(d.view.scene() is not None and d.view.scene().items() for d in (compare.left,
                                                                                              compare.right)),
                    timeout=JOB_TIMEOUT)  # both graphs drawn before their tabs close
    second = dialog.driver.job
    assert isinstance(second, WarmJob) and second.pid == first.pid and reused(second) == [True]

    pid = first.pid
    assert pid is not None and not dead_within(pid, 0)
    with qtbot.waitSignal(doc.destroyed, timeout=10_000):
        window.close_tab(window.tabs.indexOf(doc))  # the comparison tab still shows the program
    assert not dead_within(pid, 0)
    while window.tabs.count():
        window.close_tab(0)
    qtbot.waitUntil(lambda: dead_within(pid, 0), timeout=10_000)  # the last Run panel showing it held the worker
    assert not [k for k in warm_pool().workers if k.program == str(mlp.resolve())]
