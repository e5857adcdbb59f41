"""Start the window: open files from the command line (or the bundled example), hand files to an already running
window, and implement `--screenshot` (open, wait until the graph is laid out and painted, save the window, exit)."""
from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from pt2_viewer.app.qt import application, later
from pt2_viewer.app.settings import APPLICATION, ORGANIZATION
from pt2_viewer.core.platform import install
from pt2_viewer.core.util.files import write_atomically

if TYPE_CHECKING:
    from pt2_viewer.app.main_window import MainWindow

RESOURCES = install.resources()
EXAMPLE = RESOURCES / "examples" / "example.pt2"
SCREENSHOT_TIMEOUT_MS = 180_000


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) or sys.platform in ("darwin", "win32")


def run_gui(args: argparse.Namespace) -> int:
    if not os.environ.get("QT_QPA_PLATFORM") and not _has_display():
        if not args.screenshot:
            print("pt2-viewer: no display to open a window on (DISPLAY is not set). Run it in a desktop session or "
                  "under xvfb-run; for pictures without a display use --screenshot or `pt2-viewer render`.",
                  file=sys.stderr)
            return 1
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
    app = application()
    app.setApplicationName(APPLICATION)
    app.setOrganizationName(ORGANIZATION)
    app.setDesktopFileName("pt2-viewer")
    _set_icon(app)
    files = [str(Path(f).expanduser().resolve()) if Path(f).exists() else f for f in args.files]

    if args.screenshot:
        return _screenshot(app, files[0] if files else str(EXAMPLE), args.screenshot, args.program)

    instance = None
    if not args.new_instance:
        from pt2_viewer.app.platform.single_instance import SingleInstance  # deferred: Qt (QtNetwork)

        instance = SingleInstance()
        if instance.try_hand_off(files):
            print("pt2-viewer: handed to the running window.", file=sys.stderr)
            return 0
        instance.listen()

    window = new_window()  # after the single-instance check: a second launch hands its files over without them
    if instance is not None:
        instance.files_received.connect(lambda paths: _open_many(window, paths))
    window.show()
    _open_many(window, files or ([str(EXAMPLE)] if EXAMPLE.exists() else []), program=args.program)
    return app.exec()


def new_window(*, interactive: bool = True, trust_scripts: bool = False, remember_recent: bool = True) -> MainWindow:
    """The main window (MainWindow's options), the views' modules imported here, then what start-up made frozen."""
    from pt2_viewer.app.main_window import MainWindow

    window = MainWindow(interactive=interactive, trust_scripts=trust_scripts, remember_recent=remember_recent)
    _freeze_start_up()
    return window


@functools.cache
def _freeze_start_up() -> None:
    """Once per process, after the first window is built: what start-up made (modules, classes, functions, enums:
    ~40k tracked objects that live as long as the app) leaves the cyclic collector's generations (`gc.freeze`, the
    documented use), so no later collection walks it again. Only this once: a frozen object's cycles are never
    collected, so nothing made by opening a program, and freed when its tab closes, may be frozen."""
    gc.freeze()


def _open_many(window: MainWindow, paths: list[str], program: str | None = None) -> None:
    for p in paths:
        window.open_path(p, program=program)
    window.raise_()
    window.activateWindow()


def _set_icon(app: QApplication) -> None:
    from PySide6.QtGui import QIcon

    icon = RESOURCES / "icons" / "pt2-viewer.svg"
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))


def _screenshot(app: QApplication, path: str, out: str, program: str | None) -> int:
    # the user named the file on the command line: a script runs without asking, and the file is not a recent one
    window = new_window(interactive=False, trust_scripts=True, remember_recent=False)
    window.resize(1400, 900)
    window.show()
    error = take_screenshot(window, path, out, program)
    window.layouts.close()
    if error is not None:
        print(f"pt2-viewer: {error}", file=sys.stderr)
        return 1
    print(out)
    return 0


def take_screenshot(window: MainWindow, path: str, out: str, program: str | None = None,
                    timeout_ms: int = SCREENSHOT_TIMEOUT_MS) -> str | None:
    """Open `path` in `window`, wait until its graph is painted and save the window to `out`. Returns None, or the
    one-line reason it could not: the file cannot be opened, its graph cannot be laid out (said at once, never
    after the timeout), the picture cannot be written, or nothing was ready within `timeout_ms`."""
    from pt2_viewer.app.document.widget import DocumentWidget  # deferred: Qt views

    loop = QEventLoop()
    outcome: dict[str, str | None] = {}

    def finish(error: str | None) -> None:
        if "error" not in outcome:
            outcome["error"] = error
            loop.quit()

    def save(doc: object) -> None:
        def grab() -> None:
            if "error" in outcome:
                return
            if isinstance(doc, DocumentWidget) and doc.view.painted == 0:
                later(window, grab, 20)
                return
            shown = window.shown_file()
            if shown is None or not _same_file(shown, path):  # a picture of something else is no screenshot of it
                finish(f"the window does not show '{Path(path).name}' (it shows "
                       f"{repr(Path(shown).name) if shown else 'the start page'}); no screenshot was written")
                return
            picture = window.grab()
            if not picture.save(out):
                finish(f"could not write the screenshot to '{out}'")
                return
            finish(_write_description(window, shown, out, picture.devicePixelRatio()))

        later(window, grab, 50)  # let the first paint of the laid-out scene reach the screen

    watched: list[DocumentWidget] = []

    def watch(*_args: object) -> None:
        """A document that cannot lay out its graph ends the screenshot at once, with its message. Documents appear
        as tabs, or later inside a script's tab (which says so in the status bar): look again at either."""
        for doc in window.findChildren(DocumentWidget):
            if doc not in watched:
                watched.append(doc)
                doc.layout_failed.connect(finish)
            if doc.failure:
                finish(doc.failure)

    timer = QTimer(window, singleShot=True, interval=timeout_ms)
    timer.timeout.connect(lambda: finish(f"the graph was not ready within {timeout_ms // 1000} s"))
    connections = [(window.document_ready, save), (window.open_failed, finish), (window.tabs.currentChanged, watch),
                   (window.statusBar().messageChanged, watch)]
    for signal, slot in connections:
        signal.connect(slot)
    timer.start()
    window.open_path(path, program=program)
    if "error" not in outcome:
        loop.exec()
    timer.stop()
    for signal, slot in connections:
        signal.disconnect(slot)
    for doc in watched:
        doc.layout_failed.disconnect(finish)
    return outcome["error"]


def _write_description(window: MainWindow, shown: str, out: str, pixel_ratio: float) -> str | None:
    """OUT.json beside OUT.png: what the picture shows, read from the scene that painted it
    (app/graph/view_description.py). None, or why it could not be written."""
    import json

    from pt2_viewer.app.document.view_description import describe_window  # deferred: Qt views, --screenshot only

    tab = window.current_tab()
    data = describe_window(window, shown, tab.graphs() if tab is not None else [], pixel_ratio)
    target = Path(out).with_suffix(".json")
    try:
        write_atomically(target, json.dumps(data, indent=1))
    except OSError as e:
        return f"could not write the view description to '{target}': {e.strerror or e}"
    return None


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b
