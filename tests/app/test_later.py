"""`later(context, call)` (app/qt.py): the call runs in a later turn of the event loop, and nothing of it is kept once
it ran or once its context went first (PySide6's `QTimer.singleShot(ms, context, call)` keeps `call` for good then:
a closed tab with a layout round pending stayed in memory)."""
from __future__ import annotations

import gc
import weakref

from PySide6.QtCore import QCoreApplication, QEvent, QObject

from pt2_viewer.app.qt import later


class Payload:
    """What a scheduled call holds (a document model, say)."""


def scheduled(context: QObject, ran: list[int]) -> weakref.ref[Payload]:
    payload = Payload()

    def call() -> None:
        ran.append(id(payload))

    later(context, call)
    return weakref.ref(payload)


def test_the_call_runs_later_and_is_let_go(qtbot) -> None:  # type: ignore[no-untyped-def]
    context, ran = QObject(), []
    held = scheduled(context, ran)
    assert ran == []  # not yet: a later turn
    qtbot.waitUntil(lambda: len(ran) == 1)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the spent timer
    gc.collect()
    assert held() is None


def test_a_context_gone_first_takes_the_call_with_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    context, ran = QObject(), []
    held = scheduled(context, ran)
    context.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    del context
    QCoreApplication.processEvents()
    gc.collect()
    assert ran == [] and held() is None
