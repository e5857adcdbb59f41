"""Qt face of the layout service: submit a batch of layout requests, get a signal when the child process answers.

The service (core/layout/service.py) runs Graphviz in a child process; here a QSocketNotifier watches its result pipe
so the GUI thread never blocks and never runs Graphviz (which holds the GIL).

A callback that raises is called once more with a LayoutError naming the exception: an exception escaping a Qt slot
is only printed, and the caller would wait forever for a picture that never comes.
"""
from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, Signal

from pt2_viewer.core.layout.records import LayoutError, LayoutRequest, LayoutResult
from pt2_viewer.core.layout.service import LayoutService

Callback = Callable[[list[LayoutResult] | LayoutError], None]


class LayoutClient(QObject):
    busy_changed = Signal(bool)

    def __init__(self, service: LayoutService | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.service = service or LayoutService()
        self._callbacks: dict[int, Callback] = {}
        self._notifier: QSocketNotifier | None = None
        self._fd: int | None = None

    def submit(self, requests: list[LayoutRequest], callback: Callback) -> int:
        ticket = self.service.submit(requests)
        self._callbacks[ticket] = callback
        self._watch()
        self._drain()
        self.busy_changed.emit(bool(self._callbacks))
        return ticket

    def cancel(self, ticket: int) -> None:
        if self._callbacks.pop(ticket, None) is not None:
            self.service.cancel(ticket)
        self._watch()
        self.busy_changed.emit(bool(self._callbacks))

    def close(self) -> None:
        self._callbacks.clear()
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier = None
        self.service.close()

    def _watch(self) -> None:
        """(Re)attach the notifier: the service may have restarted its child, so its fd may have changed."""
        fd = self.service.fileno()
        if fd == self._fd and self._notifier is not None:
            return
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        self._fd = fd
        if fd is not None and fd >= 0:
            self._notifier = QSocketNotifier(fd, QSocketNotifier.Type.Read, self)
            self._notifier.activated.connect(self._drain)

    def _drain(self, *_args: object) -> None:
        for ticket, outcome in self.service.poll():
            callback = self._callbacks.pop(ticket, None)
            if callback is not None:
                _deliver(callback, outcome)
        self._watch()
        self.busy_changed.emit(bool(self._callbacks))


def _deliver(callback: Callback, outcome: list[LayoutResult] | LayoutError) -> None:
    try:
        callback(outcome)
    except Exception as e:
        if isinstance(outcome, LayoutError):
            print(f"pt2-viewer: a layout callback failed: {type(e).__name__}: {e}", file=sys.stderr)
            return
        _deliver(callback, LayoutError(f"internal error {type(e).__name__}: {e}"))
