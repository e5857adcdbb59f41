"""Benchmark of the layout service: cold layouts in the child, the same from the disk cache, and how long the calling
(GUI) thread is held up while it waits the way the GUI does (select on fileno(), then poll()).

    .venv/bin/python bench/bench_layout.py            # chains, trees, a batch of small groups, a skip-connection net
    .venv/bin/python bench/bench_layout.py --heavy    # adds a 4k-node skip-connection net (tens of seconds)

Columns: `layout` is wall time from submit() to the result in hand; `blocked` is the total time spent inside submit()
and poll(); `stall` is the worst lateness of a 5 ms heartbeat on the calling thread (GIL contention included).
A temporary cache folder is used, so your own cache is untouched.
"""
from __future__ import annotations

import argparse
import select
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pt2_viewer.core.layout import LayoutEdge, LayoutNode, LayoutRequest, LayoutResult, LayoutService  # noqa: E402

HEARTBEAT_S = 0.005


def graph(n: int, parent_of, skip: int = 0, name: str = "") -> LayoutRequest:
    """n nodes; node i > 0 hangs under parent_of(i); with `skip`, also an edge i -> i + skip every `skip` nodes."""
    nodes = [LayoutNode(f"{name}{i}", 90 + (i % 4) * 20, 28) for i in range(n)]
    edges = [LayoutEdge(f"{name}{parent_of(i)}", f"{name}{i}") for i in range(1, n)]
    edges += [LayoutEdge(f"{name}{i}", f"{name}{i + skip}") for i in range(0, n - skip, skip)] if skip else []
    return LayoutRequest(nodes, edges, key_hint=name)


def chain(n: int) -> LayoutRequest:
    return graph(n, lambda i: i - 1, name="c")


def tree(n: int) -> LayoutRequest:
    return graph(n, lambda i: (i - 1) // 2, name="t")


def skipnet(n: int) -> LayoutRequest:
    return graph(n, lambda i: i - 1, skip=3, name="s")


@dataclass
class Timing:
    wall: float
    blocked: float
    stall: float
    results: list[LayoutResult]


def timed(service: LayoutService, requests: list[LayoutRequest]) -> Timing:
    """Submit and collect like the GUI: only submit() and poll() run on this thread, woken by fileno()."""
    start = time.perf_counter()
    ticket = service.submit(requests)
    blocked = time.perf_counter() - start
    stall = 0.0
    while True:
        before = time.perf_counter()
        readable, _, _ = select.select([service.fileno()], [], [], HEARTBEAT_S)
        woke = time.perf_counter()
        if not readable:
            stall = max(stall, woke - before - HEARTBEAT_S)
            continue
        finished = dict(service.poll())
        blocked += time.perf_counter() - woke
        if ticket in finished:
            outcome = finished[ticket]
            if isinstance(outcome, Exception):
                raise outcome
            return Timing(time.perf_counter() - start, blocked, stall, outcome)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heavy", action="store_true", help="also lay out a 4k-node skip-connection net")
    args = parser.parse_args()
    cases: list[tuple[str, list[LayoutRequest]]] = [
        (f"{kind} {n}", [make(n)]) for n in (100, 1000, 4000) for kind, make in (("chain", chain), ("tree", tree))
    ]
    cases.append(("200 groups x 20 nodes", [graph(20, lambda i: max(0, i - 2), name=f"g{k}.") for k in range(200)]))
    cases.append(("skip-net 1000", [skipnet(1000)]))
    if args.heavy:
        cases.append(("skip-net 4000", [skipnet(4000)]))

    with tempfile.TemporaryDirectory(prefix="pt2v-bench-") as cache_dir:
        with LayoutService(cache_dir) as service:
            first, again = timed(service, [chain(2)]), timed(service, [chain(3)])
            print(f"tiny graph: {first.wall * 1000:.0f} ms with the child's start-up, "
                  f"{again.wall * 1000:.1f} ms once the child runs")
            cold = {name: timed(service, requests) for name, requests in cases}
        with LayoutService(cache_dir) as reopened:
            warm = {name: timed(reopened, requests) for name, requests in cases}
            assert reopened.child_starts == 0, "every layout should have come from the cache"

    print(f"{'graph':24} {'cold layout':>12} {'blocked':>9} {'stall':>8} {'cached':>9} {'blocked':>9} {'stall':>8}")
    for name, _ in cases:
        c, w = cold[name], warm[name]
        assert [r.positions for r in c.results] == [r.positions for r in w.results]
        print(f"{name:24} {c.wall * 1000:10.0f}ms {c.blocked * 1000:7.2f}ms {c.stall * 1000:6.1f}ms"
              f" {w.wall * 1000:7.0f}ms {w.blocked * 1000:7.2f}ms {w.stall * 1000:6.1f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
