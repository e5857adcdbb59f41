"""The one layout loop (core/layout/driver.py) on the bundled example's scene (a real transformer export whose module
groups need several rounds, children first), laid out by real Graphviz: in this thread, and in rounds through an
asynchronous service the way the window drives the layout child (answers inside `submit`, as from the disk cache;
each next round queued; a newer run or a stop supersedes the rounds under way; failures end the rounds)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.graph.scene import SceneModel
from pt2_viewer.core.layout.driver import Answer, LayoutRounds, lay_out_all
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.layout.records import LayoutError, LayoutRequest
from pt2_viewer.core.pt2.reader import read_archive

EXAMPLE = Path(__file__).resolve().parents[3] / "resources" / "examples" / "example.pt2"


def fresh_scene() -> SceneModel:
    archive = read_archive(EXAMPLE)
    scene = DocumentModel(archive, archive.programs[0]).level.scene
    scene.expand_all()
    return scene


class Service:
    """Answers with real Graphviz, at once (inside submit) or when told to; queued rounds run when the test says."""

    def __init__(self, at_once: bool = True, fail: bool = False) -> None:
        self.at_once, self.fail = at_once, fail
        self.waiting: dict[int, tuple[list[LayoutRequest], Answer]] = {}
        self.cancelled: list[int] = []
        self.queued: list[Callable[[], None]] = []
        self.rounds = 0

    def submit(self, requests: list[LayoutRequest], answer: Answer) -> int:
        self.rounds += 1
        ticket = self.rounds
        if self.at_once:
            answer(LayoutError("the layout process died") if self.fail else [layout(r) for r in requests])
        else:
            self.waiting[ticket] = (requests, answer)
        return ticket

    def cancel(self, ticket: int) -> None:
        self.cancelled.append(ticket)

    def drain(self) -> None:
        while self.queued:
            self.queued.pop(0)()


def test_rounds_through_a_service_match_laying_out_in_this_thread() -> None:
    here = fresh_scene()
    rounds_here = lay_out_all(here, layout)
    assert rounds_here > 1 and here.ready  # children before their groups
    service = Service()
    rounds = LayoutRounds(service.submit, service.cancel, service.queued.append)
    scene, ready, sent = fresh_scene(), [], []
    rounds.run(scene, on_ready=lambda: ready.append(True), on_failed=lambda e: ready.append(e),
               on_round=lambda pending: sent.append(len(pending)))
    assert rounds.busy and not ready  # the next round waits for the event loop, not a deeper stack
    service.drain()
    assert ready == [True] and not rounds.busy and scene.ready and service.rounds == rounds_here == len(sent)
    assert scene.compose().nodes == here.compose().nodes


def test_a_newer_run_supersedes_and_stop_ends_the_rounds() -> None:
    service = Service(at_once=False)
    rounds = LayoutRounds(service.submit, service.cancel, service.queued.append)
    scene, ready = fresh_scene(), []
    rounds.run(scene, on_ready=lambda: ready.append("first"), on_failed=ready.append)
    rounds.run(scene, on_ready=lambda: ready.append("second"), on_failed=ready.append)
    assert service.cancelled == [1]
    requests, late = service.waiting.pop(1)
    late([layout(r) for r in requests])  # the superseded answer comes anyway: ignored
    assert not service.queued and "" not in scene.layouts
    rounds.stop()
    assert service.cancelled == [1, 2] and not rounds.busy and ready == []


def test_a_failing_service_ends_the_rounds_with_its_error() -> None:
    service = Service(fail=True)
    rounds = LayoutRounds(service.submit, service.cancel, service.queued.append)
    errors: list[BaseException] = []
    rounds.run(fresh_scene(), on_ready=lambda: errors.append(AssertionError("ready")), on_failed=errors.append)
    assert [str(e) for e in errors] == ["the layout process died"] and not rounds.busy and not service.queued


def test_take_cached_gives_a_scene_what_the_disk_cache_holds_and_stops_at_a_miss(tmp_path: Path) -> None:
    from pt2_viewer.core.layout.cache import LayoutCache
    from pt2_viewer.core.layout.driver import take_cached

    cache = LayoutCache(tmp_path, engine="test-engine")
    scene = fresh_scene()
    assert take_cached(scene, cache) is False and "" not in scene.layouts, "an empty cache: the rounds lay it out"
    while pending := scene.pending_requests():  # laid out once, every result kept as the service keeps them
        results = {key: (req, layout(req)) for key, req in pending.items()}
        for req, res in results.values():
            cache.put(req, res)
        scene.set_layouts(results)
    drawn = scene.compose()

    again = fresh_scene()
    assert take_cached(again, cache) is True and again.ready, "every round from the cache, children first"
    assert again.compose().nodes == drawn.nodes
    partly = fresh_scene()
    (next(p for p in sorted(tmp_path.rglob("*.json")))).unlink()  # one shape gone
    assert take_cached(partly, cache) is False and not partly.ready
