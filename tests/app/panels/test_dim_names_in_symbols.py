"""A script's `Dim("batch")` shown by its name, with the symbol export made of it beside it, in the script tab's
Symbols panel and in the program's shapes (resources/examples/convention.py: x.shape[0] is Dim("batch"), x.shape[1]
Dim.AUTO)."""
from __future__ import annotations

import pytest

from pt2_viewer.app.export.script_document import ScriptDocument
from pt2_viewer.app.main_window import MainWindow
from tests.programs import REPO_ROOT

CONVENTION = REPO_ROOT / "resources" / "examples" / "convention.py"


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_symbols_say_the_scripts_dim_names(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    window = MainWindow(interactive=False, trust_scripts=True)
    qtbot.addWidget(window)
    window.show()
    try:
        with qtbot.waitSignal(window.document_ready, timeout=240_000) as blocker:
            window.open_path(str(CONVENTION))
        doc = blocker.args[0]
        doc.panels.setCurrentWidget(doc.symbols_panel)
        tree = doc.symbols_panel.tree
        names = {tree.topLevelItem(i).text(3): tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())}
        batch = names["x.shape[0]"]
        assert batch.startswith("batch (s") and batch.endswith(")")  # the script's name, then torch's symbol
        assert "(" not in names["x.shape[1]"]  # Dim.AUTO has no name
        symbol = batch[len("batch ("):-1]
        tip = doc.view.tooltip_text(doc.view.nodes["x"])  # and hovering a node whose shape uses it says so too
        assert f"named dims: {symbol} = batch" in tip
        assert "[batch, " in tip and f"[{symbol}, " not in tip  # its shape in the script's name
    finally:
        for i in range(window.tabs.count()):
            if isinstance(tab := window.tabs.widget(i), ScriptDocument):
                tab.shutdown()
