"""File > Open of a Python script offers two ways to run it: export it (torch.export, the script's tab,
app/export/script_document.py) or run it with torch.compile's trace (app/export/trace_run.py), whose trace then
opens through the format registry as any trace folder does (issue 40 §5).

The question is asked only from File > Open, where the user picks a script to do something with it; a script opened
from the command line, Open Recent or a drop is exported, as before. For a script not trusted yet, the question is
the trust question too (the same warning, `app/platform/trust_dialog.py`): either way of running it counts as the
yes, remembered until the file changes, so the export does not ask a second time."""
from __future__ import annotations

import enum
from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QMessageBox, QStatusBar, QWidget

from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.platform.trust_dialog import YES_KEPT
from pt2_viewer.core.formats.probe import Probe
from pt2_viewer.core.formats.registry import Opens, recognise
from pt2_viewer.core.platform.trust import TrustStore

TITLE = "Run this script?"
EXPORT_BUTTON = "Export with torch.export"
TRACE_BUTTON = "Run with torch.compile's trace"


class ScriptRun(enum.Enum):
    EXPORT = "export"
    TRACE = "trace"


class Window(Protocol):
    """What opening a script this way needs of the main window."""

    interactive: bool
    trust_store: TrustStore

    def add_tab(self, tab: DocumentTab, title: str, tooltip: str = "") -> int: ...

    def open_path(self, path: str, program: str | None = None) -> None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 (Qt's name)


def question_text(path: Path, trusted: bool) -> str:
    ways = ("Export it with torch.export: PT2 Viewer captures its torch.export calls and shows each program.\n"
            "Run it with torch.compile's trace: PT2 Viewer runs it under TORCH_TRACE (provenance tracking on, the "
            "compile caches off) and opens the trace: its compiles, graph breaks at your lines, recompiles.")
    if trusted:
        return f"How should PT2 Viewer run this script?\n\n{path}\n\n{ways}"
    return (f"Opening a Python script runs its code on this computer, with your permissions:\n\n{path}\n\n{ways}\n\n"
            "Either way it runs in a separate worker process, but the code can still read, change or delete your "
            f"files and use the network. Run it only if you trust where it came from.\n\n{YES_KEPT}")


def ask(parent: QWidget | None, path: Path, trusted: bool) -> ScriptRun | None:
    """Export, trace, or nothing (Cancel, or the box closed)."""
    box = QMessageBox(QMessageBox.Icon.Question if trusted else QMessageBox.Icon.Warning, TITLE,
                      question_text(path, trusted), QMessageBox.StandardButton.NoButton, parent)
    export = box.addButton(EXPORT_BUTTON, QMessageBox.ButtonRole.AcceptRole)
    trace = box.addButton(TRACE_BUTTON, QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(export)
    box.exec()
    clicked = box.clickedButton()
    return ScriptRun.EXPORT if clicked is export else ScriptRun.TRACE if clicked is trace else None


def open_chosen(window: Window, path: str) -> bool:
    """For a script picked in File > Open: ask how to run it and run the trace here; True when handled (the trace
    started, or the user chose neither), False to open `path` as usual (not a script, no dialogs, or export)."""
    p = Path(path).expanduser()
    if not window.interactive or not p.is_file() or recognise(Probe(str(p.resolve()))).opens_as is not Opens.SCRIPT:
        return False
    p = p.resolve()
    trusted = window.trust_store.is_trusted(p)
    choice = ask(window if isinstance(window, QWidget) else None, p, trusted)
    if choice is None:
        window.statusBar().showMessage(f"{p.name} was not run.")
        return True
    if not trusted:
        window.trust_store.trust(p)
    if choice is ScriptRun.EXPORT:
        return False
    run_trace(window, p)
    return True


def run_trace(window: Window, script: Path) -> DocumentTab:
    """Run `script` under torch.compile's trace in a tab of its own; its trace opens when the run has made one."""
    from pt2_viewer.app.export.trace_run import TraceRunTab  # deferred: the job driver (test_lazy_imports)

    tab = TraceRunTab(script)
    tab.trace_ready.connect(window.open_path)
    window.add_tab(tab, f"{script.name} (trace run)", str(script))
    tab.start()
    return tab
