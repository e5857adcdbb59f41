"""One window per user: a second `pt2-viewer FILE` hands FILE to the running window instead of opening another.

Double-clicking three `.pt2` files starts three processes; each first offers its files to a local socket
(QLocalServer/QLocalSocket) and exits if the running instance acknowledged them, which then opens them in new tabs.
The first process listens on that socket. The socket lives in `$XDG_RUNTIME_DIR` when there is one (a folder only the
user can read) and is restricted to the user either way, so other users cannot push paths into the window.

Wire protocol, one request per connection: the client sends one UTF-8 JSON line `{"files": [absolute paths]}`, the
server answers `ok` and a newline, then emits `files_received`. A client that gets no answer within its
timeout (a hung or dying instance) reports False, and the caller opens its own window.
"""
from __future__ import annotations

import getpass
import json
import os
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

ACK = b"ok\n"
MAX_REQUEST_BYTES = 1 << 20  # a list of paths; anything larger is not a real request


def default_server_name() -> str:
    """A per-user socket name: a full path in $XDG_RUNTIME_DIR, else a name Qt puts in the temp folder."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir and os.path.isdir(runtime_dir):
        return os.path.join(runtime_dir, "pt2-viewer.sock")
    try:
        user = str(os.getuid())
    except AttributeError:  # Windows: a named pipe per user name
        user = getpass.getuser()
    return f"pt2-viewer-{user}"


class SingleInstance(QObject):
    """Hand files to a running PT2 Viewer (`try_hand_off`) or become the one that receives them (`listen`)."""

    files_received = Signal(list)  # list[str] of absolute paths; [] means "a second launch without files"

    def __init__(self, server_name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.server_name = server_name or default_server_name()
        self._server: QLocalServer | None = None

    # ---------------------------------------------------------------- second launch: the client side

    def try_hand_off(self, paths: list[str], timeout_ms: int = 1000) -> bool:
        """Send `paths` (made absolute) to a running instance; True once it acknowledged them."""
        request = json.dumps({"files": [os.path.abspath(p) for p in paths]}).encode("utf-8") + b"\n"
        deadline = time.monotonic() + timeout_ms / 1000

        def left_ms() -> int:
            return max(0, int((deadline - time.monotonic()) * 1000))

        socket = QLocalSocket()
        try:
            socket.connectToServer(self.server_name)
            if not socket.waitForConnected(left_ms()):
                return False
            socket.write(request)
            if not socket.waitForBytesWritten(left_ms()):
                return False
            answer = bytearray()
            while not answer.endswith(b"\n") and len(answer) < len(ACK):
                if not socket.waitForReadyRead(left_ms()):
                    return False
                answer += bytes(socket.readAll().data())
            return bytes(answer) == ACK
        finally:
            socket.abort()

    # ---------------------------------------------------------------- first launch: the server side

    def listen(self) -> bool:
        """Start receiving hand-offs. False if another live instance already listens under this name."""
        if self._server is not None and self._server.isListening():
            return True
        # Ask first: with UserAccessOption, listen() succeeds even over a live instance's socket (Qt 6.11 on Linux)
        # and would cut that window off. A socket file nobody answers on was left by a crash and is replaced.
        if self._someone_listens():
            return False
        QLocalServer.removeServer(self.server_name)
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.server_name):
            return False
        server.newConnection.connect(self._accept)
        self._server = server
        return True

    def close(self) -> None:
        """Stop listening and free the name (also happens when the object is destroyed with its process)."""
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None

    def is_listening(self) -> bool:
        return self._server is not None and self._server.isListening()

    def _someone_listens(self) -> bool:
        probe = QLocalSocket()
        probe.connectToServer(self.server_name)
        alive = probe.waitForConnected(200)
        probe.abort()
        return alive

    def _accept(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            connection = _Connection(socket)  # a child of the socket: both go when the client hangs up
            connection.files_received.connect(self.files_received)
            socket.disconnected.connect(socket.deleteLater)


class _Connection(QObject):
    """Reads one request from one client socket, answers it and hangs up."""

    files_received = Signal(list)

    def __init__(self, socket: QLocalSocket) -> None:
        super().__init__(socket)
        self._socket = socket
        self._buffer = bytearray()
        socket.readyRead.connect(self._read)

    def _read(self) -> None:
        self._buffer += bytes(self._socket.readAll().data())
        if b"\n" not in self._buffer:
            if len(self._buffer) > MAX_REQUEST_BYTES:
                self._socket.abort()
            return
        files = _parse_request(bytes(self._buffer[: self._buffer.index(b"\n")]))
        self._socket.readyRead.disconnect(self._read)
        if files is None:
            self._socket.write(b'error: expected one JSON line {"files": [paths]}\n')
            self._socket.disconnectFromServer()
            return
        # Acknowledge first: opening the files may take longer than the client waits.
        self._socket.write(ACK)
        self._socket.flush()
        self._socket.disconnectFromServer()
        self.files_received.emit(files)


def _parse_request(line: bytes) -> list[str] | None:
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    files = message.get("files") if isinstance(message, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return files
