"""Layout engine and service: real Graphviz layouts, a real child process, a real disk cache."""
from __future__ import annotations

import dataclasses
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pt2_viewer.core.layout import (
    LayoutCache,
    LayoutEdge,
    LayoutError,
    LayoutNode,
    LayoutRequest,
    LayoutResult,
    LayoutService,
)
from pt2_viewer.core.layout.__main__ import answer
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.layout.trivial import trivial_layout

ROOT = Path(__file__).resolve().parents[3]


def chain(n: int, hint: str = "") -> LayoutRequest:
    nodes = [LayoutNode(f"v{i}", 80, 30) for i in range(n)]
    return LayoutRequest(nodes, [LayoutEdge(f"v{i}", f"v{i + 1}") for i in range(n - 1)], key_hint=hint or f"chain{n}")


def big_random_dag(n: int = 3000, seed: int = 0) -> LayoutRequest:
    """Takes Graphviz several seconds: long enough to cancel or kill while it runs."""
    rng = random.Random(seed)
    edges = [(rng.randrange(i), i) for i in range(1, n)] + [tuple(sorted(rng.sample(range(n), 2))) for _ in range(n)]
    return LayoutRequest(
        [LayoutNode(str(i), 60, 20) for i in range(n)], [LayoutEdge(str(a), str(b)) for a, b in edges], key_hint="big"
    )


def boxes_overlap(request: LayoutRequest, result: LayoutResult) -> list[tuple[str, str]]:
    boxes = []
    for node in request.nodes:
        x, y = result.positions[node.id]
        boxes.append((node.id, x - node.width / 2, y - node.height / 2, x + node.width / 2, y + node.height / 2))
    eps = 0.01
    return [
        (a[0], b[0])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[1] < b[3] - eps and b[1] < a[3] - eps and a[2] < b[4] - eps and b[2] < a[4] - eps
    ]


@pytest.fixture
def service(tmp_path):
    svc = LayoutService(tmp_path / "cache", processes=1)  # one child's life; the pool's tests are at the end
    yield svc
    svc.close()


# ---- engine: Graphviz in this process ----


def test_chain_runs_top_to_bottom_in_one_column():
    request = LayoutRequest(
        [LayoutNode("A", 100, 40), LayoutNode("B", 100, 40), LayoutNode("C", 100, 40)],
        [LayoutEdge("A", "B"), LayoutEdge("B", "C")],
    )
    result = layout(request)
    (ax, ay), (bx, by), (cx, cy) = (result.positions[k] for k in "ABC")
    assert ay < by < cy, "y grows downward: the source is on top"
    assert by - ay >= 40 and cy - by >= 40, "ranks are at least a node height apart"
    assert ax == bx == cx
    assert result.width == pytest.approx(100, abs=1) and result.height >= 3 * 40 + 2 * 0.4 * 72 - 1
    assert ay == pytest.approx(20, abs=1), "the top node touches the top of the drawing"


def test_left_to_right_chain():
    result = layout(LayoutRequest(chain(4).nodes, chain(4).edges, rankdir="LR"))
    xs = [result.positions[f"v{i}"][0] for i in range(4)]
    ys = {result.positions[f"v{i}"][1] for i in range(4)}
    assert xs == sorted(xs) and len(set(xs)) == 4 and len(ys) == 1


def test_edges_follow_request_order_and_bad_edges_are_ignored():
    request = LayoutRequest(
        [LayoutNode("a", 80, 30), LayoutNode("b", 80, 30), LayoutNode("c", 80, 30, "ellipse")],
        [LayoutEdge("a", "b"), LayoutEdge("a", "a"), LayoutEdge("a", "ghost"), LayoutEdge("b", "c"),
         LayoutEdge("a", "c"), LayoutEdge("a", "b")],
    )
    result = layout(request)
    assert [(e.src, e.dst) for e in result.edges] == [(e.src, e.dst) for e in request.edges]
    assert result.edges[1].points == [] and result.edges[2].points == [], "self-loop and dangling edge: no route"
    for route in (result.edges[i] for i in (0, 3, 4, 5)):
        assert len(route.points) >= 4 and (len(route.points) - 1) % 3 == 0, "cubic spline: 1 + 3k control points"
        (_, sy), (_, dy) = result.positions[route.src], result.positions[route.dst]
        assert route.points[0][1] == pytest.approx(sy + 15, abs=2), "starts at the bottom of its source"
        assert route.head is not None and route.head[1] == pytest.approx(dy - 15, abs=2), "arrow tip on the target"
        assert all(sy <= y <= dy for _, y in route.points)
    assert result.edges[0].points != result.edges[5].points, "parallel edges get their own routes"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.tuples(st.integers(10, 200), st.integers(10, 80)), min_size=1, max_size=25),
    pairs=st.lists(st.tuples(st.integers(0, 24), st.integers(0, 24)), max_size=40),
    shape=st.sampled_from(["box", "ellipse", "circle", "diamond"]),
)
def test_nodes_never_overlap_and_fit_the_drawing(sizes, pairs, shape):
    nodes = [LayoutNode(f'n"{i}\\ é', w, h, shape) for i, (w, h) in enumerate(sizes)]
    edges = [LayoutEdge(nodes[a % len(nodes)].id, nodes[b % len(nodes)].id) for a, b in pairs]
    request = LayoutRequest(nodes, edges)
    result = layout(request)
    assert set(result.positions) == {n.id for n in nodes}
    assert boxes_overlap(request, result) == []
    for node in nodes:
        x, y = result.positions[node.id]
        assert node.width / 2 - 0.5 <= x <= result.width - node.width / 2 + 0.5
        assert node.height / 2 - 0.5 <= y <= result.height - node.height / 2 + 0.5


def test_empty_request():
    result = layout(LayoutRequest([], [LayoutEdge("a", "b")]))
    assert result.positions == {} and result.width == 0 and result.edges[0].points == []


# ---- records: JSON and validation ----


def test_json_round_trip():
    request = LayoutRequest(
        [LayoutNode('quote"back\\slash', 72, 36, "ellipse"), LayoutNode("ünï", 10, 10.5)],
        [LayoutEdge('quote"back\\slash', "ünï")],
        rankdir="LR",
        key_hint="layer1.0",
    )
    assert LayoutRequest.from_json(request.to_json()) == request
    result = layout(request)
    text = result.to_json()
    assert "\n" not in text
    assert LayoutResult.from_json(text) == result
    assert LayoutResult.from_json(text.encode("utf-8")) == result


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: LayoutNode("a", -1, 10), "width must be positive"),
        (lambda: LayoutNode("a", 10, float("nan")), "height must be a finite number"),
        (lambda: LayoutNode("a", 10, 10, "blob"), "unknown shape 'blob'"),
        (lambda: LayoutRequest([LayoutNode("a", 1, 1)] * 2, []), "node id 'a' appears twice"),
        (lambda: LayoutRequest([], [], rankdir="up"), "rankdir must be one of"),
        (lambda: LayoutRequest.from_json('{"nodes": 3, "edges": []}'), "malformed layout request"),
        (lambda: LayoutResult.from_json('{"positions": {"a": [1]}, "edges": [], "width": 1, "height": 1, '
                                        '"seconds": 0}'), "a node position must be a flat list of finite x, y"),
        (lambda: LayoutResult.from_json('{"positions": {"a": [1, 2, 3, 4]}, "edges": [], "width": 1, "height": 1, '
                                        '"seconds": 0}'), "the position of 'a' must be an [x, y] pair"),
        (lambda: LayoutResult.from_json('{"positions": {}, "edges": [["a", "b", [1, "2"], null]], "width": 1, '
                                        '"height": 1, "seconds": 0}'), "malformed layout result: TypeError"),
        (lambda: LayoutResult.from_json('{"positions": {}, "edges": [["a", "b", [1, NaN], null]], "width": 1, '
                                        '"height": 1, "seconds": 0}'), "edge points must be a flat list of finite"),
        (lambda: LayoutResult.from_json("[]"), "must be a JSON object"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert message in str(info.value)


def test_child_answers_errors_instead_of_dying():
    reply = answer({"ticket": 7, "requests": [{"nodes": [["a", 1, 1, "box"]], "edges": [["a"]]}]}, None)
    assert reply["ticket"] == 7 and "malformed layout request" in reply["error"]
    reply = answer({"ticket": 8, "requests": [chain(2).to_json_obj()]}, None)
    assert LayoutResult.from_json_obj(reply["results"][0]).positions.keys() == {"v0", "v1"}


def test_importing_the_package_does_not_load_pygraphviz():
    code = "import sys, pt2_viewer.core.layout; assert 'pygraphviz' not in sys.modules, 'pygraphviz imported'"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# ---- cache ----


def test_cache_stores_and_ignores_corrupt_entries(tmp_path):
    cache = LayoutCache(tmp_path, engine="test-engine")
    request = chain(3)
    assert cache.get(request) is None
    result = layout(request)
    assert cache.put(request, result)
    assert cache.get(request) == result
    renamed = LayoutRequest(request.nodes, request.edges, key_hint="another group of the same shape")
    assert cache.get(renamed) == result, "key_hint is not part of the key"
    assert LayoutCache(tmp_path, engine="other-graphviz").get(request) is None, "the engine is part of the key"
    assert not list(cache.path(cache.key(request)).parent.glob(".tmp-*")), "no temp files left behind"

    entry = cache.path(cache.key(request))
    entry.write_bytes(entry.read_bytes()[:-20])
    assert cache.get(request) is None, "truncated entry"
    other = layout(chain(4))
    entry.write_text(other.to_json())
    assert cache.get(request) is None, "entry of another graph"
    assert cache.put(request, result) and cache.get(request) == result, "rewritten over the corrupt entry"


def test_default_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PT2V_CACHE_DIR", str(tmp_path / "pt2v"))
    assert LayoutCache().directory == tmp_path / "pt2v" / "layout"
    monkeypatch.delenv("PT2V_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert LayoutCache().directory == tmp_path / "xdg" / "pt2-viewer" / "layout"


# ---- service: one child process ----


def test_batch_is_laid_out_in_the_child_in_order(service):
    batch = [chain(3, "g0"), chain(5, "g1"), LayoutRequest(chain(4).nodes, chain(4).edges, rankdir="LR")]
    ticket = service.submit(batch)
    results = service.wait(ticket, timeout=60)
    assert [r.positions for r in results] == [layout(r).positions for r in batch]
    assert service.child_starts == 1 and service.child_pid not in (None, os.getpid())
    second = service.wait(service.submit([chain(6)]), timeout=60)
    assert len(second[0].positions) == 6 and service.child_starts == 1, "the child is reused"
    assert service.poll() == [], "tickets collected by wait() are not polled again"


def test_fileno_becomes_readable_and_poll_returns_finished_tickets(service):
    first, second = service.submit([chain(3)]), service.submit([chain(2), chain(4)])
    finished: dict[int, object] = {}
    deadline = time.monotonic() + 60
    while len(finished) < 2 and time.monotonic() < deadline:
        readable, _, _ = select.select([service.fileno()], [], [], deadline - time.monotonic())
        if readable:
            finished.update(service.poll())
    assert sorted(finished) == [first, second]
    assert [len(r.positions) for r in finished[second]] == [2, 4]
    assert select.select([service.fileno()], [], [], 0)[0] == [], "drained: not readable any more"
    assert service.poll() == []


def test_reopen_is_served_from_the_cache_without_a_child(tmp_path):
    batch = [chain(3, "a"), chain(7, "b")]
    with LayoutService(tmp_path / "cache") as first:
        computed = first.wait(first.submit(batch), timeout=60)
        assert first.child_starts == 1
    with LayoutService(tmp_path / "cache") as second:
        cached = second.wait(second.submit(batch), timeout=60)
        assert cached == computed
        assert second.child_starts == 0 and second.child_pid is None
        mixed = second.wait(second.submit([chain(3), chain(9)]), timeout=60)
        assert mixed[0] == computed[0] and len(mixed[1].positions) == 9
        assert second.child_starts == 1, "only the uncached graph went to a child"


def test_child_finds_its_code_from_another_folder_and_a_relative_cache_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with LayoutService("relative-cache") as svc:
        assert svc.wait(svc.submit([chain(2)]), timeout=60)[0].positions.keys() == {"v0", "v1"}
    assert len(list((tmp_path / "relative-cache").rglob("*.json"))) == 1, "the child wrote the entry"


def test_service_without_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PT2V_CACHE_DIR", str(tmp_path))
    with LayoutService(use_cache=False) as svc:
        assert svc.wait(svc.submit([chain(3)]), timeout=60)[0].positions.keys() == {"v0", "v1", "v2"}
    assert not any(tmp_path.iterdir())


def test_cancel_kills_a_long_layout_at_once_and_the_service_goes_on(service):
    service.wait(service.submit([chain(2)]), timeout=60)  # child warm, so the big one is surely in its hands
    big = service.submit([big_random_dag()])
    queued = service.submit([chain(3)])
    assert service.wait_in_child(big, timeout=30)
    pid = service.child_pid
    started = time.monotonic()
    service.cancel(queued)
    service.cancel(big)
    assert time.monotonic() - started < 0.5
    with pytest.raises(LayoutError, match="cancelled"):
        service.wait(big, timeout=10)
    with pytest.raises(LayoutError, match="cancelled"):
        service.wait(queued, timeout=10)
    after = service.wait(service.submit([chain(4)]), timeout=60)
    assert len(after[0].positions) == 4
    assert service.child_starts == 2 and service.child_pid != pid, "the killed child was replaced"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert service.poll() == [], "cancelled tickets are never reported"


def test_killed_child_fails_its_ticket_and_the_next_one_works(service):
    service.wait(service.submit([chain(2)]), timeout=60)
    big = service.submit([big_random_dag(seed=1), chain(3, "small")])
    assert service.wait_in_child(big, timeout=30)
    os.kill(service.child_pid, signal.SIGKILL)
    with pytest.raises(LayoutError, match="killed by SIGKILL.*2 graph\\(s\\).*big, small"):
        service.wait(big, timeout=30)
    assert len(service.wait(service.submit([chain(5)]), timeout=60)[0].positions) == 5
    assert service.child_starts == 2


def test_close_stops_the_child(tmp_path):
    svc = LayoutService(tmp_path)
    svc.wait(svc.submit([chain(2)]), timeout=60)
    pid = svc.child_pid
    svc.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(RuntimeError, match="closed"):
        svc.submit([chain(2)])


def test_submit_refuses_what_is_not_a_request(service):
    with pytest.raises(TypeError, match="LayoutRequest"):
        service.submit([json.loads(chain(2).to_json())])
    with pytest.raises(KeyError):
        service.wait(12345, timeout=1)


def test_a_child_that_cannot_start_is_reported(tmp_path):
    with LayoutService(tmp_path, python=str(tmp_path / "no-such-python")) as svc:
        with pytest.raises(LayoutError, match="could not start the layout process .*no-such-python"):
            svc.wait(svc.submit([chain(2)]), timeout=30)


def test_one_node_is_laid_out_without_graphviz_exactly_as_graphviz_would():
    one = LayoutRequest([LayoutNode("a", 100.3, 46)], [LayoutEdge("a", "a"), LayoutEdge("a", "ghost")])
    for request in (one, LayoutRequest([], [LayoutEdge("a", "b")])):
        assert trivial_layout(request) == dataclasses.replace(layout(request), seconds=0.0)
    assert trivial_layout(chain(2)) is None, "two nodes need Graphviz"


# ---- the pool: a round of many layouts shared among children ----


def test_share_out_balances_work_and_keeps_order():
    from pt2_viewer.core.layout.service import SHARE_ABOVE_NODES, share_out

    requests = [chain(n) for n in (300, 10, 250, 40, 200, 5)]
    shares = share_out(requests, 2)
    assert sorted(i for share in shares for i in share) == list(range(6)), "every request in exactly one share"
    assert all(share == sorted(share) for share in shares)
    work = [sum(len(requests[i].nodes) for i in share) for share in shares]
    assert len(shares) == 2 and max(work) - min(work) < 300, work  # apart by less than the biggest request
    small = [chain(10), chain(SHARE_ABOVE_NODES // 4)]
    assert share_out(small, 4) == [[0, 1]], "too little work for a second child"
    assert share_out(requests, 1) == [list(range(6))]


def test_a_big_round_uses_two_children_and_lays_out_as_one_child_does(tmp_path):
    requests = [big_random_dag(250, seed) for seed in range(4)] + [chain(3, "small")]
    with LayoutService(tmp_path / "pool", processes=2) as pool, LayoutService(use_cache=False, processes=1) as one:
        shared = pool.wait(pool.submit(requests), timeout=120)
        alone = one.wait(one.submit(requests), timeout=120)
        assert pool.child_starts == 2 and one.child_starts == 1
    assert [r.positions for r in shared] == [r.positions for r in alone]
    assert [r.width for r in shared] == [r.width for r in alone]


def test_cancel_kills_every_child_of_a_shared_round(tmp_path):
    with LayoutService(tmp_path / "pool", processes=2) as svc:
        ticket = svc.submit([big_random_dag(3000, 1), big_random_dag(3000, 2)])
        assert svc.wait_in_child(ticket, timeout=60)
        pids = [p.pid for p in svc._procs if p is not None]
        svc.cancel(ticket)
        after = svc.wait(svc.submit([chain(2, "after")]), timeout=60)
        assert len(after) == 1
        for pid in pids:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def test_the_engine_id_needs_no_pygraphviz_import() -> None:
    """A reopen's layouts all come from the cache: finding their keys must not load Graphviz in the window's process.
    The id names pygraphviz's extension (which fixes the Graphviz version it reports) by its file."""
    code = ("import sys; from pt2_viewer.core.layout.engine_id import engine_id; i = engine_id(); "
            "print(i); print('pygraphviz' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    engine, imported = run.stdout.split()
    assert imported == "False" and "/_graphviz" in engine and engine.startswith("engine")
