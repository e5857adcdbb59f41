"""The window stays on its screen: it opens at 1400x900 or the screen's size if smaller, a size restored from a
bigger screen (or a monitor since unplugged) is brought onto the screen it lands on, and what the window holds
never widens it.

Qt grows a top-level window to its layout's minimum size whenever a child's minimum grows (a long label, a row of
buttons, one more tab): after three failing scripts the window was 1575 px wide on a 1400 px screen, its right
side (the side panel's tabs, the Problems text) off screen. A minimum set explicitly on the window is one the layout
leaves alone (QLayout honours `setMinimumSize` on a window over its own total), so the window only changes size
when the user or the program says so; the panes it holds fit their part of it (their texts wrap, their tables
scroll)."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

DEFAULT_SIZE = QSize(1400, 900)
SMALLEST = QSize(640, 480)  # the least the user can shrink it to (a smaller screen's size, if smaller)


def available(window: QWidget) -> QRect:
    """The part of the window's screen (else the primary screen) that windows may use."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def keep_on_screen(window: QWidget, saved: object = None) -> None:
    """Size a new window: the saved geometry (`QWidget.saveGeometry`) if there is one, fitted to the screen; else
    the default size, fitted. Then fix its minimum so nothing it holds can push it past the screen."""
    room = available(window)
    window.setMinimumSize(SMALLEST.boundedTo(room.size()))
    window.resize(DEFAULT_SIZE.boundedTo(room.size()))
    if isinstance(saved, (QByteArray, bytes)) and window.restoreGeometry(saved):
        fit_to_screen(window)


def fit_to_screen(window: QWidget) -> None:
    """Bring the whole window, frame included, onto the available part of its screen: smaller if it is bigger than
    the screen, moved if it hangs off an edge."""
    room = available(window)
    frame = window.frameGeometry()
    extra = frame.size() - window.size()  # title bar and borders, where a window manager draws them
    size = window.size().boundedTo(room.size() - extra)
    if size != window.size():
        window.resize(size)
        frame = window.frameGeometry()
    x = min(max(frame.x(), room.left()), room.right() + 1 - frame.width())
    y = min(max(frame.y(), room.top()), room.bottom() + 1 - frame.height())
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)
