"""A window starts the layout child while it reads a program (LayoutService.prestart), so the first layout of a cold
open does not wait for the child's Python to start; the child started early is the one that lays it out."""
from __future__ import annotations

import os
from pathlib import Path

from pt2_viewer.core.layout import LayoutEdge, LayoutNode, LayoutRequest, LayoutService


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
