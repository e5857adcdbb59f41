"""Start the window: open files from the command line (or the bundled example), hand files to an already running
window, and implement `--screenshot` (open, wait until the graph is laid out and painted, save the window, exit)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
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
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("PT2 Viewer")
    app.setOrganizationName("pt2-viewer")
    app.setDesktopFileName("pt2-viewer")
    _set_icon(app)
    files = [str(Path(f).expanduser().resolve()) if Path(f).exists() else f for f in args.files]

    if args.screenshot:
        return _screenshot(app, files[0] if files else str(EXAMPLE), args.screenshot, args.program)

    instance = None
    if not args.new_instance:
        from app.single_instance import SingleInstance

        instance = SingleInstance()
        if instance.try_hand_off(files):
            print("pt2-viewer: handed to the running window.", file=sys.stderr)
            return 0
        instance.listen()

    from app.main_window import MainWindow

    window = MainWindow()
    if instance is not None:
        instance.files_received.connect(lambda paths: _open_many(window, paths))
    window.show()
    _open_many(window, files or ([str(EXAMPLE)] if EXAMPLE.exists() else []), program=args.program)
    return app.exec()


def _open_many(window, paths: list[str], program: str | None = None) -> None:  # type: ignore[no-untyped-def]
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
    from app.main_window import MainWindow

    window = MainWindow(interactive=False, trust_scripts=True)  # the user named the script on the command line
    window.resize(1400, 900)
    window.show()
    outcome: dict[str, object] = {}

    def save(doc: object) -> None:
        def grab() -> None:
            from app.document import DocumentWidget

            if isinstance(doc, DocumentWidget) and doc.view.painted == 0:
                QTimer.singleShot(20, grab)
                return
            if not window.grab().save(out):
                outcome["error"] = f"could not write the screenshot to '{out}'"
            app.quit()

        QTimer.singleShot(50, grab)  # let the first paint of the laid-out scene reach the screen

    def fail(message: str) -> None:
        outcome["error"] = message
        app.quit()

    def timeout() -> None:
        outcome["error"] = f"the graph was not ready within {SCREENSHOT_TIMEOUT_MS // 1000} s"
        app.quit()

    window.document_ready.connect(save)
    window.open_failed.connect(fail)
    QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, timeout)
    window.open_path(path, program=program)
    app.exec()
    window.layouts.close()
    if "error" in outcome:
        print(f"pt2-viewer: {outcome['error']}", file=sys.stderr)
        return 1
    print(out)
    return 0
