"""Program > Lower to ExecuTorch… in the window: the worker lowers the program, the source is painted delegated / not
delegated (the reason in Details and the tooltip), the table "not delegated: op, reason, count" reveals its nodes,
the `.pte` opens beside its source linked through the ETRecord's debug handles, and the per-op error and time
overlays are painted on both graphs. Offscreen; screenshots go to PT2V_SCREENSHOTS when it is set."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.compare.view import CompareView
from pt2_viewer.app.deploy.lower_dialog import LowerDialog
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.compare.session import LEFT, RIGHT
from pt2_viewer.core.deploy.delegation import OVERLAY
from pt2_viewer.core.graph.ids import node_of
from pt2_viewer.core.model.program import NodeOp
from tests.programs import ExportFailed

TIMEOUT = 600_000


def _shot(widget, name: str) -> None:  # type: ignore[no-untyped-def]
    folder = os.environ.get("PT2V_SCREENSHOTS")
    if folder:
        widget.grab().save(str(Path(folder) / name))


@pytest.fixture(scope="module")
def source() -> Path:
    pytest.importorskip("executorch", reason="executorch lowers the program (requirements-dev.txt)")
    from tests.deploy_programs import source_path

    try:
        return source_path(os.environ.get("PT2V_LOWER_MODEL", "small"))
    except ExportFailed as e:
        pytest.skip(str(e))


@pytest.mark.worker
def test_lowering_paints_the_source_and_opens_the_pte_beside_it(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                source: Path) -> None:
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(source))
    doc = blocker.args[0]
    tabs = window.tabs.count()
    dialog = window.lower_dialog()
    assert isinstance(dialog, LowerDialog)
    dialog.set_backend("xnnpack")
    dialog.start()
    qtbot.waitUntil(lambda: window.tabs.count() == tabs + 1, timeout=TIMEOUT)
    view = window.tabs.widget(window.tabs.currentIndex())
    assert isinstance(view, CompareView)
    result = dialog.lowered_result
    assert result is not None and result.backend == "xnnpack"
    calls = {n.name for n in doc.model.program.graph.nodes if n.op == NodeOp.CALL_FUNCTION}
    for painted in (doc, view.docs[LEFT]):  # the source tab and the comparison's source side
        overlay = painted.tools.extra[OVERLAY]
        assert calls <= set(overlay.categories)
        for row in result.not_delegated or []:
            assert row.reason in overlay.texts[row.node]
            assert ("Reason", row.reason) in overlay.rows[row.node]
    # the two sides are linked through the ETRecord's debug handles: a delegated node's counterpart is a delegate call
    for node in result.delegated or []:
        assert any(n.startswith("delegate_") for n in view.session.counterparts(LEFT, node)), node
    # the table: a row per (op, reason), its click selecting one of its nodes in the source
    if dialog.table.topLevelItemCount():
        item = dialog.table.topLevelItem(0)
        qtbot.mouseClick(dialog.table.viewport(), Qt.MouseButton.LeftButton,
                         pos=dialog.table.visualItemRect(item).center())
        assert node_of(doc.model.selection) in item.data(0, Qt.ItemDataRole.UserRole)
    qtbot.waitUntil(lambda: view.docs[RIGHT].ready and view.docs[LEFT].ready, timeout=TIMEOUT)
    _shot(window, "lowered_compare.png")
    _shot(dialog, "lower_dialog.png")

    # per-op error and time, on both graphs
    qtbot.mouseClick(dialog.numbers_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Numerics error" in view.docs[RIGHT].tools.extra, timeout=TIMEOUT)
    assert "Numerics error" in view.docs[LEFT].tools.extra
    qtbot.mouseClick(dialog.times_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Run time" in view.docs[RIGHT].tools.extra, timeout=TIMEOUT)
    times = view.docs[RIGHT].tools.extra["Run time"]
    assert times.values and set(times.values) <= {n.name for n in view.docs[RIGHT].model.program.graph.nodes}
    assert set(view.docs[LEFT].tools.extra["Run time"].values) <= calls
    _shot(window, "lowered_times.png")
