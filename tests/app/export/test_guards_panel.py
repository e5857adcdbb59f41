"""The Guards tab on a real export with `.item()`: the unbacked symbol stands for the user's own line, with torch's
frame that made it (`local_scalar_dense`) kept to the tooltip (issue 43 §2)."""
from __future__ import annotations

import pytest

from pt2_viewer.app.export.guards_panel import GuardsPanel

torch = pytest.importorskip("torch")


def test_an_unbacked_symbol_stands_for_the_users_item_line(qtbot) -> None:  # type: ignore[no-untyped-def]
    from tests.core.export.test_guards import Checked, capture_export, line_of

    panel = GuardsPanel()
    qtbot.addWidget(panel)
    panel.set_log(capture_export(Checked(), (torch.tensor(10), torch.randn(60)), strict=False), "Checked")
    rows = {panel.symbols.topLevelItem(i).text(0): panel.symbols.topLevelItem(i)
            for i in range(panel.symbols.topLevelItemCount())}
    u0 = rows["u0"]
    assert u0.text(1) == "a = x.item()  # <item>" and "fake_impls" not in u0.text(1)
    assert u0.text(4).startswith(f"line {line_of('<item>')} in forward")
    assert "local_scalar_dense" in u0.toolTip(1)
