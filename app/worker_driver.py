"""Drive a `core.worker.client.WorkerJob` from the GUI thread without ever blocking it.

The job's pipes are watched with one QSocketNotifier each, and a short QTimer polls as well (it enforces the time
limit and notices the exit when a grandchild keeps a pipe open). Every wake-up calls `job.poll()`, which only reads
what is already there. The job's callbacks run inside `poll()` and are turned into Qt signals:
`event(dict)`, `output(str, str)` (stream, line) and `finished(object)` (the JobOutcome).

`cancel()` kills the job's whole process group and returns within a second. Called from a slot while `poll()` is
delivering (a user clicking Cancel cannot, but code reacting to an event can), it waits until `poll()` has returned.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Signal

from core.worker.client import JobOutcome, WorkerJob

POLL_INTERVAL_MS = 30


class WorkerDriver(QObject):
    """Runs one worker job at a time; `start()` again after `finished` for the next."""

    event = Signal(dict)
    output = Signal(str, str)
    finished = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job: WorkerJob | None = None
        self._notifiers: dict[int, QSocketNotifier] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_INTERVAL_MS)
        self._timer.timeout.connect(self._poll)
        self._polling = False
        self._cancel_requested = False

    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    def start(self, job: str, request: dict[str, Any], out_dir: str | Path, **options: Any) -> WorkerJob:
        """Start a job (`options` go to WorkerJob: timeout_s, memory_limit_mb, env ...). Never blocks."""
        if self.running:
            raise RuntimeError("a job is already running; cancel it or wait for `finished` first")
        self._cancel_requested = False
        self.job = WorkerJob(job, request, out_dir, on_event=self.event.emit, on_output=self.output.emit,
                             on_finished=self._on_finished, **options)
        self.job.start()  # a start failure calls on_finished at once
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
        self.finished.emit(outcome)
