"""Drive a `pt2_viewer.core.jobs.client.WorkerJob` from the GUI thread without ever blocking it.

The job's pipes are watched with one QSocketNotifier each, and a short QTimer polls as well (it enforces the time
limit and notices the exit when a grandchild keeps a pipe open). Every wake-up calls `job.poll()`, which only reads
what is already there. The job's callbacks run inside `poll()` and are turned into Qt signals:
`event(dict)`, `output(str, str)` (stream, line) and `finished(object)` (the JobOutcome).

A `.pt2` job the worker refused because the file holds code (error kind "untrusted": pickled objects, modules to
import; core/jobs/archive_check.py) is not reported at once: the driver asks the user, listing what was found
(app/platform/trust_dialog.py, remembered per file content), and on a yes runs the same job again with `trust`.
Without dialogs (tests, `--screenshot`) only a file trusted before is run again; otherwise the refusal is reported as
it came.

A driver made with `warm=PROGRAM` runs its jobs in the program's warm worker (core/jobs/warm.py, one pool per
application): the program is loaded once for all its jobs. `hold=True` keeps that worker for as long as the driver
lives, as every document does for its program (app/jobs/holds.py); the pool ends it when the last holder goes, after
`PT2V_WARM_IDLE_S` idle seconds, over its memory cap, and when the application quits. `prewarm()` starts it early (it
imports torch while the user picks what to do). A cancelled or crashed warm job ends its worker; the next job starts a
fresh one.

`cancel()` kills the job's whole process tree and returns within a second; so does the application quitting or the
driver being destroyed with its owner. Called from a slot while `poll()` is
delivering (a user clicking Cancel cannot, but code reacting to an event can), it waits until `poll()` has returned.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from pt2_viewer.app.jobs import holds
from pt2_viewer.app.platform.trust_dialog import confirm_imports, confirm_program
from pt2_viewer.core.jobs.client import JobOutcome
from pt2_viewer.core.jobs.job import Job
from pt2_viewer.core.jobs.python_env import choose_worker
from pt2_viewer.core.jobs.remote.any_worker import worker_job
from pt2_viewer.core.jobs.remote.content import FolderTooBig, allow_folder
from pt2_viewer.core.jobs.remote.target import is_remote
from pt2_viewer.core.jobs.schemas.base import Schema
from pt2_viewer.core.jobs.schemas.failure import Failure
from pt2_viewer.core.jobs.schemas.run import ProgramRequest
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.jobs.warm import WarmPool
from pt2_viewer.core.platform.trust import TrustStore

POLL_INTERVAL_MS = 30
REAP_INTERVAL_MS = 30_000  # how often idle warm workers are checked (exited, over the memory cap, not held)
_POOL: WarmPool | None = None


def warm_pool() -> WarmPool:
    """The application's warm workers; all of them end when it quits."""
    global _POOL
    if _POOL is None:
        _POOL = WarmPool()
        holds.attach(_POOL)  # the programs the tabs show (app/jobs/holds.py)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(_POOL.close)
            timer = QTimer(app)
            timer.setInterval(REAP_INTERVAL_MS)
            timer.timeout.connect(_POOL.reap)
            timer.start()
    return _POOL


class WorkerDriver(QObject):
    """Runs one worker job at a time; `start()` again after `finished` for the next."""

    # The job's events. The name is QObject.event's (the stubs see a method replaced); a rename would change every
    # panel that listens, and Qt never calls event() on this object for a signal attribute.
    event = Signal(dict)  # type: ignore[assignment]
    output = Signal(str, str)
    finished = Signal(object)

    def __init__(self, parent: QObject | None = None, warm: str | None = None, hold: bool = False) -> None:
        super().__init__(parent)
        self.job: Job | None = None
        self.warm = warm  # the program whose warm worker runs this driver's jobs
        if warm and hold:
            holds.hold(warm, self)
        self._notifiers: dict[int, QSocketNotifier] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_INTERVAL_MS)
        self._timer.timeout.connect(self._poll)
        self._polling = False
        self._cancel_requested = False
        self._started: tuple[str, Schema, str | Path, dict[str, Any]] | None = None
        app = QCoreApplication.instance()
        if app is not None:  # the window quitting ends the job's whole process tree, whoever forgot to cancel
            app.aboutToQuit.connect(self.cancel)

    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    def prewarm(self) -> None:
        """Start the program's warm worker now, so that the job asked for later starts at once."""
        if self.warm and not is_remote(choose_worker().path):  # a worker over SSH has no warm worker (yet)
            warm_pool().prewarm(self.warm)

    def start(self, job: str, request: Schema, out_dir: str | Path, **options: Any) -> Job:
        """Start a job on its typed request (core/jobs/schemas/; `options` are JobSpec's: timeout_s, memory_limit_mb,
        env ...). Never blocks."""
        if self.running:
            raise RuntimeError("a job is already running; cancel it or wait for `finished` first")
        self._cancel_requested = False
        spec = JobSpec(job, request, out_dir, on_event=self.event.emit, on_output=self.output.emit,
                       on_finished=self._on_finished, **options)
        self._started = (job, spec.request, out_dir, options)  # the request as the job has it (typed)
        self.job = (warm_pool().job(spec) if self.warm and not is_remote(choose_worker().path)
                    else worker_job(spec))  # local, or over SSH
        self.job.start()  # a start failure calls on_finished at once
        self.destroyed.connect(lambda *_args, job=self.job: _orphaned(job))  # its owner closed: nothing outlives it
        if self.job.running:
            self._watch()
            self._timer.start()
        return self.job

    def cancel(self) -> None:
        """Stop the job and everything it started; `finished` follows with status "cancelled"."""
        if not self.running:
            return
        if self._polling:
            self._cancel_requested = True
            return
        assert self.job is not None
        self.job.cancel()  # calls _on_finished, which stops watching

    def _poll(self) -> None:
        job = self.job
        if job is None or self._polling:
            return
        self._polling = True
        try:
            job.poll()
        finally:
            self._polling = False
        if self.job is not job:  # a slot of `finished` already started the next job
            return
        if self._cancel_requested and job.running:
            job.cancel()
        if job.running:
            self._watch()

    def _watch(self) -> None:
        """One notifier per open pipe; drop those whose pipe reached end of file (a notifier on a closed fd spins)."""
        assert self.job is not None
        open_fds = set(self.job.fds())
        for fd in list(self._notifiers):
            if fd not in open_fds:
                self._drop(fd)
        for fd in open_fds - set(self._notifiers):
            notifier = QSocketNotifier(fd, QSocketNotifier.Type.Read, self)
            notifier.activated.connect(self._poll)
            self._notifiers[fd] = notifier

    def _unwatch(self) -> None:
        self._timer.stop()
        for fd in list(self._notifiers):
            self._drop(fd)

    def _drop(self, fd: int) -> None:
        notifier = self._notifiers.pop(fd)
        notifier.setEnabled(False)
        notifier.deleteLater()

    def _on_finished(self, outcome: JobOutcome) -> None:
        self._unwatch()  # the pipes are closed now
        if self._rerun_if_trusted(outcome) or self._rerun_if_folder_copied(outcome):
            return
        self.finished.emit(outcome)

    def _rerun_if_folder_copied(self, outcome: JobOutcome) -> bool:
        """A job for an SSH worker stopped before copying a script's big folder: ask, and on a yes run it again."""
        too_big = getattr(self.job, "too_big", None)
        if not isinstance(too_big, FolderTooBig) or self._started is None:
            return False
        parent = self.parent()
        widget = parent if isinstance(parent, QWidget) else None
        if not self._interactive(widget):
            return False
        answer = QMessageBox.question(widget, "Copy the whole folder?", f"{outcome.message}\n\nCopy it anyway?")
        if answer != QMessageBox.StandardButton.Yes:
            return False
        allow_folder(too_big.folder)
        job, request, out_dir, options = self._started
        self.start(job, request, out_dir, **options)
        return True

    def _rerun_if_trusted(self, outcome: JobOutcome) -> bool:
        """The job refused an untrusted file: ask (or look up) the user's trust and start it again with `trust`."""
        failure = Failure.of_result(outcome.result) if outcome.ok else None
        if failure is None or failure.kind != "untrusted" or self._started is None:
            return False
        job, request, out_dir, options = self._started
        if not isinstance(request, ProgramRequest) or request.trust or request.program is None:
            return False
        program = request.program
        parent = self.parent()
        widget = parent if isinstance(parent, QWidget) else None
        store = getattr(parent, "trust", None)
        store = store if isinstance(store, TrustStore) else TrustStore.default()
        items, modules = failure.consent, failure.modules
        if modules and len(modules) == len(items) and not store.is_trusted(program):
            # only installed modules to import: asked per module and worker Python, not for the whole file
            python = str(options.get("python") or choose_worker().path)
            asked = sorted(set(request.allow_imports) | set(modules))
            if set(modules) <= set(request.allow_imports) or not confirm_imports(
                    widget, program, python, modules, items, store, interactive=self._interactive(widget)):
                return False
            self.start(job, replace(request, allow_imports=asked), out_dir, **options)
            return True
        if not confirm_program(widget, program, store, items, interactive=self._interactive(widget)):
            return False
        self.start(job, replace(request, trust=True), out_dir, **options)
        return True

    @staticmethod
    def _interactive(widget: QWidget | None) -> bool:
        """Whether a dialog may be shown: the owner's `interactive`, else its window's (False in tests)."""
        for owner in (widget, widget.window() if widget is not None else None):
            value = getattr(owner, "interactive", None)
            if isinstance(value, bool):
                return value
        return widget is not None


def _orphaned(job: Job) -> None:
    """The driver is gone (its tab or dialog closed): end the job without calling back into the dead driver."""
    job.on_event = job.on_output = job.on_finished = None
    job.cancel()
