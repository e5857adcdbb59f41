"""Issue 32 in the window: a program opened again comes from the parsed-program cache (its JSON is not read into the
model again), its layouts from the layout cache on the thread that builds its model (no round trip to the layout
service), and shows the same graph. On the bundled example (a real two-layer transformer export)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pt2_viewer.app.graph import loader
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.pt2 import parsed_cache, reader
from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache
from tests.app.graph.test_graph_tools import EXAMPLE, TIMEOUT, open_and_wait


def test_a_reopened_program_comes_from_the_cache_with_the_same_graph(qtbot, window: MainWindow, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "STORE_AFTER_S", 0.0)  # the entry at once (the window waits until its first view)
    path = shutil.copy(EXAMPLE, tmp_path / "example.pt2")
    first = open_and_wait(qtbot, window, Path(path))
    shown = (sorted(first.view.nodes), sorted(first.view.groups))
    program = first.model.program
    entry = ParsedProgramCache().entry_path(path)
    qtbot.waitUntil(entry.exists, timeout=TIMEOUT)

    def no_json(*_args: object) -> None:
        raise AssertionError("the program's JSON was read again")

    monkeypatch.setattr(reader, "read_archive_files", no_json)
    monkeypatch.setattr(parsed_cache, "read_archive_files", no_json)  # the name the cache calls it by
    monkeypatch.setattr(parsed_cache, "read_archive", no_json)
    again = MainWindow(interactive=False)
    qtbot.addWidget(again)
    opened: list[object] = []
    again.document_ready.connect(opened.append)
    again.open_failed.connect(opened.append)
    again.open_path(str(path))
    qtbot.waitUntil(lambda: bool(opened), timeout=TIMEOUT)
    second = opened[0]
    assert not isinstance(second, str), second  # open_failed says why (the JSON read again)
    assert (sorted(second.view.nodes), sorted(second.view.groups)) == shown
    assert second.model.program.graph.nodes == program.graph.nodes
    assert second.model.program.signature == program.signature
    # its layouts were taken from the disk cache where its model was built: the layout service was asked nothing,
    # no child started, and the graph was drawn in the turn its model arrived
    service = again.layouts.service
    assert (service.asked, service.cache_hits, service.laid_out, service.child_starts) == (0, 0, 0, 0)
    again.layouts.close()



def test_a_layout_cache_that_fails_does_not_stop_a_program_from_opening(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Taking the first view's layouts from the cache is optional: when it raises (a broken pygraphviz, a damaged
    entry), the window's layout rounds lay the program out as for a first open."""
    from pt2_viewer.core.layout.cache import LayoutCache

    def broken(*_args: object) -> None:
        raise ModuleNotFoundError("No module named 'pygraphviz'")

    monkeypatch.setattr(LayoutCache, "get", broken)
    doc = open_and_wait(qtbot, window, EXAMPLE)
    assert doc.ready and doc.view.nodes



def test_a_program_opened_for_the_first_time_is_laid_out_while_its_widgets_are_built(  # type: ignore[no-untyped-def]
        qtbot, cold_layout_cache: Path, tmp_path: Path) -> None:
    """On a miss, the thread that builds the model sends the first view's round to the layout service at once
    (loader.first_view_model): the child lays it out while the window builds the document, and the window's own
    first round is then answered from the disk cache (later rounds, for groups inside groups, are the window's)."""
    window = MainWindow(interactive=False)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    path = shutil.copy(EXAMPLE, tmp_path / "example.pt2")
    doc = open_and_wait(qtbot, window, Path(path))
    assert doc.ready and doc.view.nodes
    service = window.layouts.service
    assert service.cache is not None and service.cache.directory == cold_layout_cache.absolute()
    assert service.laid_out > 0  # nothing was in the cache: the child laid the first view out
    assert service.cache_hits > 0  # the window's first round found its shapes in the cache, laid out ahead
    window.layouts.close()
