"""The overlay's legend is a strip under the graph, never over it, and every word in it is whole (issue 43 §4: a box
in the corner covered nodes, and a narrow pane broke "14 c/hanges", "32.0 M/B"). Through the real window on the
bundled example at 1280x800 and in a pane half as wide."""
from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QFontMetricsF

from pt2_viewer.app.main_window import MainWindow
from tests.app.graph.test_graph_tools import EXAMPLE, open_and_wait


def check_strip(doc) -> None:  # type: ignore[no-untyped-def]
    legend, view = doc.tools.legend, doc.view
    port = view.viewport().geometry()
    assert legend.isVisible() and legend.geometry().top() > port.bottom(), "under the graph, not over it"
    bar = view.horizontalScrollBar()
    assert not bar.isVisible() or legend.geometry().bottom() < bar.mapTo(view, QPoint(0, 0)).y(), "above its scroll bar"
    assert view.viewportMargins().bottom() == legend.height()
    fm = QFontMetricsF(legend.font())
    for entry in legend.entries:
        assert entry.rect.right() <= legend.width(), entry
        if entry.kind == "category":  # a swatch, then the label whole on its row
            assert entry.rect.width() >= fm.horizontalAdvance(entry.text), entry
    rows = {e.rect.top() for e in legend.entries if e.kind != "note"}
    assert legend.height() >= 18 * len(rows)


def test_the_legend_is_a_strip_under_the_graph_with_whole_words(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.resize(1280, 800)
    doc = open_and_wait(qtbot, window, EXAMPLE)
    doc.tools.show_overlay("Parameter bytes")
    qtbot.waitUntil(lambda: doc.tools.legend.isVisible())
    check_strip(doc)
    scale = next(e for e in doc.tools.legend.entries if e.kind == "scale")
    assert scale.text.endswith(" B") and scale.high.endswith(" KB")  # "128 B" … "16.5 KB", each whole
    doc.tools.show_overlay("dtype")  # categories
    check_strip(doc)
    wide = doc.tools.legend.height()
    doc.panels.setMinimumWidth(0)
    window.resize(760, 800)  # a pane as narrow as a comparison's: the entries take more rows, none is cut
    qtbot.waitUntil(lambda: doc.view.width() < 500 or doc.tools.legend.height() >= wide)
    check_strip(doc)
    doc.tools.legend.close_button.click()
    assert not doc.tools.legend.isVisible() and doc.view.viewportMargins().bottom() == 0  # the room given back
