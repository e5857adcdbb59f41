"""Opening a torch.compile trace in the window (a `TORCH_TRACE` folder or one of its logs, as the format registry
recognises it: File > Open, the command line, drag-and-drop): the trace is read in a thread, as a big `.pt2` is
(app/graph/loader.py), so a big trace never freezes the window; its tab (app/trace/tab.py) is added when it is read.
A trace already open shows its tab again. A trace that cannot be read at all is one line, as any file is."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtWidgets import QTabWidget

from pt2_viewer.app.document.tab import DocumentTab
from pt2_viewer.app.trace.tab import TraceTab
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.model import Trace
from pt2_viewer.core.trace.reader import read_trace


class Recent(Protocol):
    def remember(self, path: str) -> None: ...


class Window(Protocol):
    """What opening a trace needs of the main window."""

    tabs: QTabWidget
    document_ready: SignalInstance

    @property
    def recent_files(self) -> Recent: ...

    def add_tab(self, tab: DocumentTab, title: str, tooltip: str = "") -> int: ...

    def open_failed_message(self, path: str, message: str) -> None: ...



class TraceLoader(QObject):
    """`load(path)` reads the trace in a thread: `read(path, Trace)` or `failed(path, message)` on the GUI thread."""

    read = Signal(str, object)
    failed = Signal(str, str)

    def load(self, path: str) -> None:
        threading.Thread(target=self._run, args=(path,), daemon=True, name=f"read trace {path}").start()

    def _run(self, path: str) -> None:
        try:
            trace = read_trace(path)
        except TraceError as e:
            self.failed.emit(path, str(e))
        except OSError as e:
            self.failed.emit(path, f"Could not read the trace '{path}': {e.strerror or e}. Check its permissions.")
        except Exception as e:  # a reader bug must not take the window down; say what happened
            self.failed.emit(path, f"Could not read the trace '{path}': internal error {type(e).__name__}: {e}")
        else:
            self.read.emit(path, trace)


def open_trace(window: Window, path: str) -> TraceLoader | None:
    """Read the trace at `path` off the GUI thread and show it in a tab (`document_ready(None)` once shown); a trace
    already open: its tab, at once (None returned)."""
    for i in range(window.tabs.count()):
        tab = window.tabs.widget(i)
        if isinstance(tab, TraceTab) and _same(tab.trace.path, path):
            window.tabs.setCurrentWidget(tab)
            window.document_ready.emit(None)
            return None
    loader = TraceLoader(window.tabs)

    def shown(read_path: str, trace: object) -> None:
        loader.deleteLater()
        assert isinstance(trace, Trace)
        window.recent_files.remember(read_path)
        tab = TraceTab(trace)
        window.add_tab(tab, Path(read_path).name, read_path)
        window.document_ready.emit(None)

    def failed(failed_path: str, message: str) -> None:
        loader.deleteLater()
        window.open_failed_message(failed_path, message)

    loader.read.connect(shown)
    loader.failed.connect(failed)
    loader.load(path)
    return loader


def _same(a: Path, b: str) -> bool:
    try:
        return a.resolve() == Path(b).resolve()
    except OSError:
        return str(a) == b
