"""Issue 30: Details cut values ("3.6 …", a weight's name) while keeping room for notes that most rows do not
have. A row without a note draws its value across the notes column; values come before notes. At 1280x800, on a
program whose weights are named as GPT-2's. Offscreen; waits on signals only."""
from __future__ import annotations

from PySide6.QtGui import QFontMetrics

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.panels import fixed_font
from tests.issue30_programs import transformer_names

TIMEOUT = 60_000


def test_values_are_whole_beside_notes_and_span_where_there_is_none(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.resize(1280, 800)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(transformer_names()))
    doc = blocker.args[0]
    details = doc.panel_widgets["Details"]
    doc.select("linear_3")
    qtbot.waitUntil(lambda: details.tree.isVisible() and details.tree.viewport().width() > 0)
    tree = details.tree
    metrics = QFontMetrics(fixed_font())
    arguments = {r.text(0): r for r in details.row_items("Arguments")}
    weight = arguments["weight"]
    assert weight.text(1) == "p_transformer_h_1_mlp_c_fc_weight" and weight.text(2) == "f32[8, 8]"
    assert metrics.horizontalAdvance(weight.text(1)) <= tree.columnWidth(1)  # whole beside its note
    torch_fn = next(r for r in details.row_items("Metadata") if r.text(0) == "torch_fn")
    assert torch_fn.text(2) == ""  # no note: its value has the notes column too
    assert tree.columnWidth(1) < metrics.horizontalAdvance(torch_fn.text(1)) \
        <= tree.columnWidth(1) + tree.columnWidth(2)
