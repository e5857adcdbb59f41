"""File > Open of a script offers "Run with torch.compile's trace" beside export (issue 40 §5): chosen, the script
runs in the `trace_script` worker with progress and Cancel, and its trace opens in the window through the format
registry. Real torch.compile runs (Inductor, CPU) in a real worker; offscreen; every wait is on a signal."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from pt2_viewer.app.export.trace_run import TraceRunTab
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.trace.tab import TraceTab
from pt2_viewer.app.window import script_open
from pt2_viewer.core.platform.trust import TrustStore
from tests.core.trace.test_trace_script import SCRIPT
from tests.trace_programs import marked_line

pytestmark = pytest.mark.worker
TIMEOUT = 300_000


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MainWindow:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the worker inherits it; the machine is shared
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: pytest.fail(f"the window warned: {a[2]}"))
    w = MainWindow(interactive=True)  # File > Open's question is asked only where dialogs are
    w.trust_store = TrustStore(tmp_path / "trusted.json")
    qtbot.addWidget(w)
    yield w
    for i in range(w.tabs.count()):
        w.tabs.widget(i).release()


def answer(monkeypatch: pytest.MonkeyPatch, script: Path, button: str | None) -> list[tuple[str, str, list[str]]]:
    """File > Open picks `script`; the question it asks is answered by clicking `button` (None: Cancel), as a user
    would."""
    asked: list[tuple[str, str, list[str]]] = []

    def exec_(box: QMessageBox) -> int:
        asked.append((box.windowTitle(), box.text(), [b.text() for b in box.buttons()]))
        cancel = box.button(QMessageBox.StandardButton.Cancel)
        next(b for b in box.buttons() if b.text() == button or (button is None and b is cancel)).click()
        return 0

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(script), ""))
    monkeypatch.setattr(QMessageBox, "exec", exec_)
    return asked


def test_file_open_runs_a_script_under_the_trace_and_opens_its_trace(qtbot, window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "model.py"
    script.write_text(SCRIPT, encoding="utf-8")
    asked = answer(monkeypatch, script, script_open.TRACE_BUTTON)
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT):  # the trace's tab is shown
        window.open_dialog()
    ((title, text, buttons),) = asked
    assert title == script_open.TITLE and str(script) in text and "runs its code" in text  # the trust question too
    assert buttons[:2] == [script_open.EXPORT_BUTTON, "Run with torch.compile's trace"]
    assert window.trust_store.is_trusted(script)  # a yes: exporting it next asks nothing more
    tabs = [window.tabs.widget(i) for i in range(window.tabs.count())]
    (run,) = [t for t in tabs if isinstance(t, TraceRunTab)]
    (shown,) = [t for t in tabs if isinstance(t, TraceTab)]
    assert window.tabs.currentWidget() is shown and Path(shown.trace.path) == run.trace_folder
    assert "between the graphs" in run.log_view.toPlainText()  # the script's own output
    assert "opened in its own tab" in run.progress_label.text() and not run.running
    trace = shown.trace
    assert {"[0/0]", "[0/1]"} <= {str(c.id) for c in trace.compiles}
    (brk,) = trace.graph_breaks
    assert brk.line == marked_line(script, "print") and Path(brk.file) == script
    assert [r.compile_id for r in trace.recompiles if "x.size(0)" in " ".join(r.reasons)]
    assert not any(c.cache_hit for c in trace.compiles)


def test_cancel_stops_the_trace_run_and_opens_nothing(qtbot, window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "hangs.py"
    script.write_text("import time\n\nprint('started', flush=True)\ntime.sleep(600)\n")
    answer(monkeypatch, script, script_open.TRACE_BUTTON)
    window.open_dialog()
    run = window.tabs.currentWidget()
    assert isinstance(run, TraceRunTab) and run.running
    with qtbot.waitSignal(run.driver.output, timeout=TIMEOUT, check_params_cb=lambda _s, text: text == "started"):
        pass
    with qtbot.waitSignal(run.run_ended, timeout=60_000) as ended:
        run.cancel_button.click()
    assert "Cancelled" in ended.args[0] and not run.running
    assert window.tabs.count() == 1  # no trace to open


def test_cancel_in_the_question_runs_nothing(qtbot, window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "model.py"
    script.write_text("print('never')\n")
    answer(monkeypatch, script, None)
    window.open_dialog()
    assert window.tabs.count() == 0 and not window.trust_store.is_trusted(script)
