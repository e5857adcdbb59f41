"""A HuggingFace program runs from the window with no question asked: its output type's module belongs to an allowed
library (core/jobs/import_policy.py), so the worker imports it by itself and the Run tab says what it imported. The
window in the tests answers no question (a prompt would refuse), so a run that succeeds asked none. Offscreen; every
wait is on a signal."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.jobs.python_env import choose_worker_python
from pt2_viewer.core.platform.trust import TrustStore
from tests.app.run.test_run_panel import JOB_TIMEOUT, open_run_tab
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)


@pytest.mark.worker  # starts a worker through the window (tests/conftest.py checks)
def test_a_huggingface_program_runs_from_the_window_with_no_prompt(qtbot, window: MainWindow, pt2_path) -> None:  # type: ignore[no-untyped-def]
    import transformers

    path = pt2_path("hf_tiny_bert")
    assert not window.interactive  # no dialog can be answered: a question would be a refusal
    _doc, panel = open_run_tab(qtbot, window, path)
    with qtbot.waitSignal(panel.finished, timeout=JOB_TIMEOUT) as blocker:
        qtbot.mouseClick(panel.cpu_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result is not None and result.ok, result and result.error
    assert panel.stage.text().splitlines() == [
        f"Ran on cpu with {result.inputs.source} inputs.",
        f"imported transformers.modeling_outputs (transformers {transformers.__version__}) for "
        "BaseModelOutputWithPoolingAndCrossAttentions"]
    assert panel.outputs.rowCount() == 2  # last_hidden_state and pooler_output
    store = TrustStore.default()
    assert not store.is_trusted(path) and not store.allowed_modules(choose_worker_python().path), \
        "nothing was trusted on the user's behalf"
