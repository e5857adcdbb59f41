"""Read archives off the GUI thread, so opening a big `.pt2` never blocks the window's event loop. Every file is read
by its format's reader, found in the format registry (core/formats/registry.py), through the parsed-program cache
for the formats it keeps."""
from __future__ import annotations

import atexit
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from pt2_viewer.app.graph.view_settings import weights_as_nodes_wanted
from pt2_viewer.core.formats.probe import Probe
from pt2_viewer.core.formats.registry import read_deferred
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.layout.driver import take_cached
from pt2_viewer.core.layout.service import LayoutService
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.pt2.errors import ArchiveError

# The parsed-program cache's entry of a program read from its JSON is written this long after the program is handed
# to the window, or at exit if sooner: encoding 10k nodes (0.3 s of CPU, much of it holding the GIL) would otherwise
# compete with the first view's layout and paint on a 2-core machine (measured: cold first paint 2.8x -> 3.6x the
# floor when written at once; 3 s was still inside a loaded machine's first view, 4-15 s).
STORE_AFTER_S = 20.0


class _DeferredStore:
    """Runs `store` once: STORE_AFTER_S from now in a thread, or when the process exits, whichever comes first (a
    program looked at for a second and closed is stored too; exiting waits for the encoding, a few tenths)."""

    def __init__(self, store: Callable[[], object]) -> None:
        self._store: Callable[[], object] | None = store
        self._lock = threading.Lock()

    def start(self) -> None:
        atexit.register(self.run)
        timer = threading.Timer(STORE_AFTER_S, self.run)
        timer.daemon = True
        timer.start()

    def run(self) -> None:
        with self._lock:  # held while storing: an exit during the timer's store waits for it to finish
            store, self._store = self._store, None
            if store is None:
                return
            try:
                store()
            except Exception:  # a cache is optional: a failure to write one must not reach the user
                pass
        atexit.unregister(self.run)


def first_view_model(archive: Archive, program: str, layouts: LayoutService | None = None) -> DocumentModel:
    """The document model of `program` as its first view draws it: weights folded or not as the user chose, and the
    layouts a program opened before has in the disk cache of `layouts` (the window's layout service) already taken
    (core/layout/driver.py take_cached), here on the building thread, so the window draws at once. On a miss, the
    first round's requests go to the service now, their answer unread: the layout child lays them out (writing them
    to the disk cache) while the window builds the document's widgets, and the window's own first round, answered
    after this one (tickets run in order), finds them in the cache (model to drawing 52-64 -> 40-49 ms at 10k nodes)."""
    model = DocumentModel(archive, archive.program(program))
    model.set_weights_as_nodes(weights_as_nodes_wanted())
    if layouts is not None and layouts.cache is not None:
        try:
            scene = model.level.scene
            if not take_cached(scene, layouts.cache):
                layouts.submit(list(scene.pending_requests().values()))
        except Exception:  # the cache is optional: the window's layout rounds redo it, and say what went wrong
            pass
    return model


class ArchiveLoader(QObject):
    """`load(path)` reads in a thread; `loaded(path, archive)` or `failed(path, message)` arrive on the GUI thread,
    `opened(path, archive, format)` (the registry's `Format` it was read as: what tab it opens as) just before
    `loaded`.
    `build(path, archive, program)` then builds the document model (indexes, module tree, shapes) in a thread too:
    `built(path, model)`. Python threads share the GIL but switch every few ms, so the window keeps painting."""

    loaded = Signal(str, object)
    opened = Signal(str, object, object)
    failed = Signal(str, str)
    not_seen_before = Signal(str)  # a path with no parsed-program entry: its JSON is read now, its layouts follow
    built = Signal(str, object)

    def build(self, path: str, archive: Archive, program: str, layouts: LayoutService | None = None) -> None:
        """`first_view_model` in a thread: `built(path, model)`."""
        self.run(path, lambda: first_view_model(archive, program, layouts), "index")

    def run(self, key: str, work: Callable[[], object], what: str = "prepare") -> None:
        """Build anything from archives already read (a document model, both sides of a comparison) in a thread:
        `built(key, result)`, or `failed(key, message)`."""
        threading.Thread(target=self._work, args=(key, work, what), daemon=True, name=f"{what} {key}").start()

    def _work(self, key: str, work: Callable[[], object], what: str) -> None:
        try:
            result = work()
        except Exception as e:  # a bug here must not take the window down; say what happened
            self.failed.emit(key, f"Could not {what} '{key}': internal error {type(e).__name__}: {e}")
            return
        self.built.emit(key, result)

    def load(self, path: str, probe: Probe | None = None) -> None:
        """Read `path` in a thread, by the reader of its format; `probe`: the one its format was recognised from
        (File > Open recognises a file first, to send a script to the export worker), which holds what recognition
        read (a zip's listing, handed on to the parsed-program cache)."""
        threading.Thread(target=self._run, args=(path, probe or Probe(path)), daemon=True, name=f"read {path}").start()

    def _run(self, path: str, probe: Probe) -> None:
        try:
            fmt, archive, store = read_deferred(  # a program opened before: no JSON parsed
                probe, on_miss=lambda: self.not_seen_before.emit(path))
        except ArchiveError as e:
            self.failed.emit(path, str(e))
        except Exception as e:  # a reader bug must not take the window down; say what happened
            self.failed.emit(path, f"Could not read '{path}': internal error {type(e).__name__}: {e}")
        else:
            self.opened.emit(path, archive, fmt)
            self.loaded.emit(path, archive)
            if store is not None:  # the parsed-program cache's entry: written once the first view is drawn, typically
                _DeferredStore(store).start()
