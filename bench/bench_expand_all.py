"""Expand all on a 10k-node program (bench/big_model.py's 135 layers, core ATen): the Graphviz layout of every group,
round after round as the window sends them, through one layout child and through the pool (one child per core).

Each run starts with an empty layout cache in a temporary folder (cold) and fresh child processes, so child start-up
is charged. The pool's figure is given as a ratio against the one-child run measured just before it. Prints figures;
asserts nothing. Usage: `.venv/bin/python bench/bench_expand_all.py [LAYERS]` (default 135).
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from big_model import program_path  # noqa: E402  (this folder is on sys.path when run as a script)

from pt2_viewer.core.graph.index import GraphIndex  # noqa: E402
from pt2_viewer.core.graph.scene import SceneModel  # noqa: E402
from pt2_viewer.core.layout import LayoutService  # noqa: E402
from pt2_viewer.core.layout.service import default_processes  # noqa: E402
from pt2_viewer.core.pt2.reader import read_archive  # noqa: E402


def expand_all(path: Path, processes: int) -> tuple[float, int, int]:
    """Seconds to lay out everything Expand all shows, the rounds it took and the groups laid out."""
    program = read_archive(path).programs[0]
    scene = SceneModel(program.graph, GraphIndex(program.graph))
    scene.expand_all()
    rounds = groups = 0
    with tempfile.TemporaryDirectory() as cache, LayoutService(cache, processes=processes) as service:
        started = time.perf_counter()
        while pending := scene.pending_requests():
            keys = list(pending)
            results = service.wait(service.submit([pending[k] for k in keys]), timeout=600)
            scene.set_layouts({k: (pending[k], r) for k, r in zip(keys, results)})
            rounds += 1
            groups += len(keys)
        return time.perf_counter() - started, rounds, groups


def main() -> int:
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 135
    path = program_path(layers)
    pool = default_processes()
    print(f"Expand all, {layers} layers ({path.name}), cold layout cache; pool = {pool} children")
    one, rounds, groups = expand_all(path, 1)
    print(f"  one child    {one:6.2f} s   ({groups} groups in {rounds} rounds)")
    if pool > 1:
        many, _, _ = expand_all(path, pool)
        print(f"  {pool} children   {many:6.2f} s   = {many / one:.2f}x the one-child time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
