"""A window starts the layout child while it reads a program it has not opened before (LayoutService.prestart, when
ParsedProgramCache.read_deferred finds no entry), so the first layout of a cold open does not wait for the child's
Python to start; the child started early is the one that lays it out. A program opened before starts none."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from pt2_viewer.core.layout import LayoutEdge, LayoutNode, LayoutRequest, LayoutService
from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)


def test_the_prestarted_child_lays_out_the_first_request(tmp_path: Path) -> None:
    with LayoutService(tmp_path / "layout") as service:
        service.prestart().join(timeout=60)
        pid = service.child_pid
        assert service.child_starts == 1 and pid not in (None, os.getpid())
        service.prestart().join(timeout=60)
        assert service.child_starts == 1, "a running child is kept, not started again"

        nodes = [LayoutNode(f"v{i}", 80, 30) for i in range(4)]
        request = LayoutRequest(nodes, [LayoutEdge(f"v{i}", f"v{i + 1}") for i in range(3)], key_hint="chain4")
        [result] = service.wait(service.submit([request]), timeout=60)
        assert set(result.positions) == {n.id for n in nodes}
        assert service.child_starts == 1 and service.child_pid == pid and service.laid_out == 1

    service.prestart().join(timeout=60)
    assert service.child_pid is None, "a closed service starts no child"


def test_only_a_program_not_opened_before_is_said_to_be_a_miss(pt2_path: Callable[[str], Path],  # noqa: F811
                                                                tmp_path: Path) -> None:
    path = tmp_path / "p.pt2"
    shutil.copy(pt2_path("topk_cond"), path)
    cache = ParsedProgramCache(tmp_path / "cache")
    misses: list[str] = []

    def read() -> None:
        _archive, store = cache.read_deferred(path, on_miss=lambda: misses.append("miss"))
        if store is not None:
            store()

    read()
    assert misses == ["miss"], "not opened before: said before its JSON is read"
    read()
    assert misses == ["miss"], "opened before: read from its entry, no layout child wanted"
    os.utime(path, ns=(1, 1))  # the same bytes, another mtime: another file as far as the entry's name knows
    read()
    assert misses == ["miss", "miss"]
    ParsedProgramCache(tmp_path / "off", limit_bytes=0).read_deferred(path, on_miss=lambda: misses.append("off"))
    assert misses[-1] == "off", "no cache wanted: every open is read from its JSON, its layouts likely needed"
