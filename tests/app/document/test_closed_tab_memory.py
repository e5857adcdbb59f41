"""A closed tab gives its memory back: its document model, graph index and module tree are collected once the tab is
gone, after a big open and after Expand all. Nothing an open or a layout round made may be frozen out of the cyclic
collector (`gc.freeze`): the module tree's parent <-> children links are a cycle only the collector frees, and a
frozen cycle outlives its tab (issue 42: +55 MB a round, open, Expand all, close). Nor may PySide6 keep a callable
scheduled on a tab's behalf (`QTimer.singleShot(ms, context, callable)` keeps it when the context goes first:
app/qt.py `later`)."""
from __future__ import annotations

import gc
import weakref

from PySide6.QtCore import QCoreApplication, QEvent

from pt2_viewer.app.main_window import MainWindow
from tests.app.graph.test_graph_tools import TIMEOUT, open_and_wait
from tests.programs import pt2_path  # noqa: F401  (fixture)


def close_and_collect(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.close_tab(window.tabs.currentIndex())
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the tab's deleteLater
    qtbot.waitUntil(lambda: window.tabs.count() == 0, timeout=TIMEOUT)
    gc.collect()


def test_a_closed_tab_is_collected_after_a_big_open_and_after_expand_all(  # type: ignore[no-untyped-def]
        qtbot, window: MainWindow, pt2_path) -> None:
    path = pt2_path("deep_encoder")  # 32 layers: its open allocates far more than 10,000 objects
    for expand in (False, True):
        doc = open_and_wait(qtbot, window, path)
        if expand:
            with qtbot.waitSignal(doc.graph_ready, timeout=TIMEOUT):
                doc.expand_all()
        model = doc.model
        # a group with a parent and children: in the tree's parent <-> children cycles
        group = next(g for g in model.level.index.modules.walk() if g.parent is not None and g.children)
        refs = {"document model": weakref.ref(model), "graph index": weakref.ref(model.level.index),
                "module group": weakref.ref(group), "widget": weakref.ref(doc)}
        del doc, model, group
        close_and_collect(qtbot, window)
        alive = [name for name, ref in refs.items() if ref() is not None]
        assert alive == [], f"still alive after the tab closed ({'after Expand all' if expand else 'opened'}): {alive}"
