"""A HuggingFace program gets a numerics comparison from the window with no question asked, and the Numerics tab says
what the worker imported for it, in the Run tab's words (core/jobs/import_policy.import_lines). The window in the
tests answers no question (a prompt would refuse), so a comparison that succeeds asked none. Offscreen; every wait is
on a signal."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.jobs.python_env import choose_worker_python
from pt2_viewer.core.platform.trust import TrustStore
from tests.app.numerics.test_numerics_panel import JOB_TIMEOUT, open_numerics_tab
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_a_huggingface_program_is_compared_from_the_window_with_no_prompt(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    import transformers

    path = pt2_path("hf_tiny_bert")
    assert not window.interactive  # no dialog can be answered: a question would be a refusal
    _doc, panel = open_numerics_tab(qtbot, window, path)
    panel.set_candidate("core")
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result is not None and result.ok, panel.failure.error.text()
    assert panel.stage.text().splitlines() == [
        f"imported transformers.modeling_outputs (transformers {transformers.__version__}) for "
        "BaseModelOutputWithPoolingAndCrossAttentions"]
    assert panel.table.rowCount() == result.compared > 0
    store = TrustStore.default()
    assert not store.is_trusted(path) and not store.allowed_modules(choose_worker_python().path), \
        "nothing was trusted on the user's behalf"
