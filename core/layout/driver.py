"""The one layout loop: ask a target (a graph's scene model) what it still needs laid out, lay that out, hand the
results back, and go again until nothing is missing. A module group is laid out after the groups inside it, so a
deep expansion takes several rounds.

Two ways to run it, one loop: `lay_out_all` in the calling thread with an engine function (`pt2-viewer render`,
tests), and `LayoutRounds` through an asynchronous service (the window: the layout child process behind a Qt
client), each round queued with `later` so answers that come back inside `submit` (the disk cache) never turn a deep
module tree into a deep Python stack. No Qt here: the caller passes its own `submit`, `cancel` and `later`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from pt2_viewer.core.layout.cache import LayoutCache
from pt2_viewer.core.layout.records import LayoutError, LayoutRequest, LayoutResult


class LayoutTarget(Protocol):
    """What the loop lays out (core/graph/scene.py's SceneModel)."""

    def pending_requests(self) -> dict[str, LayoutRequest]: ...

    def set_layouts(self, results: dict[str, tuple[LayoutRequest, LayoutResult]]) -> None: ...


Answer = Callable[[list[LayoutResult] | LayoutError], None]
Submit = Callable[[list[LayoutRequest], Answer], int]  # sends requests, returns a ticket; answers once


def lay_out_all(target: LayoutTarget, engine: Callable[[LayoutRequest], LayoutResult]) -> int:
    """Lay out everything `target` needs with `engine` in this thread; the number of rounds it took."""
    rounds = 0
    while pending := target.pending_requests():
        target.set_layouts({key: (req, engine(req)) for key, req in pending.items()})
        rounds += 1
    return rounds


def take_cached(target: LayoutTarget, cache: LayoutCache) -> bool:
    """Hand `target` what the disk cache holds of what it needs, round after round, in the calling thread; True when
    nothing is left to lay out. A program opened before finds its first view here, on the thread that built its
    model, so the window draws it without a round trip to the layout service; at the first miss the rest is left to
    the window's rounds."""
    while pending := target.pending_requests():
        found = {}
        for key, req in pending.items():
            result = cache.get(req)
            if result is None:
                return False
            found[key] = (req, result)
        target.set_layouts(found)
    return True


class LayoutRounds:
    """Rounds of layout requests through an asynchronous service, for one target at a time: `run` again supersedes
    the rounds under way (an expansion changed), `stop` ends them. Whatever goes wrong (building requests, the
    service, handing results back) ends the rounds with `on_failed(error)`, never with a caller left waiting."""

    def __init__(self, submit: Submit, cancel: Callable[[int], None], later: Callable[[Callable[[], None]], None]
                 ) -> None:
        self._submit, self._cancel, self._later = submit, cancel, later
        self._ticket: int | None = None
        self._queued = False  # a round answered, the next one queued with `later`
        self._generation = 0

    @property
    def busy(self) -> bool:
        """A layout is on its way: a ticket with the service, or the next round about to be sent."""
        return self._ticket is not None or self._queued

    def stop(self) -> None:
        if self._ticket is not None:
            self._cancel(self._ticket)
            self._ticket = None
        self._queued = False
        self._generation += 1

    def run(self, target: LayoutTarget, *, on_ready: Callable[[], None], on_failed: Callable[[BaseException], None],
            on_round: Callable[[dict[str, LayoutRequest]], None] = lambda _pending: None) -> None:
        """Send what `target` still needs, round after round; `on_round(pending)` before each round is sent,
        `on_ready()` once nothing is missing (at once when nothing was)."""
        self._run(target, on_ready, on_failed, on_round)

    def _run(self, target: LayoutTarget, on_ready: Callable[[], None], on_failed: Callable[[BaseException], None],
             on_round: Callable[[dict[str, LayoutRequest]], None]) -> None:
        self.stop()
        generation = self._generation
        try:
            pending = target.pending_requests()
        except Exception as e:  # a bug, or an archive nobody foresaw
            on_failed(e)
            return
        if not pending:
            on_ready()
            return
        on_round(pending)
        keys = list(pending)
        requests = [pending[k] for k in keys]
        answered = False

        def answer(outcome: list[LayoutResult] | LayoutError) -> None:
            nonlocal answered
            answered = True
            if generation != self._generation:
                return  # superseded or stopped
            self._ticket = None
            if isinstance(outcome, LayoutError):
                self._generation += 1
                on_failed(outcome)
                return
            try:
                target.set_layouts({k: (r, res) for k, r, res in zip(keys, requests, outcome, strict=True)})
            except Exception as e:
                self._generation += 1
                on_failed(e)
                return
            self._queued = True
            self._later(lambda: self._next(generation, target, on_ready, on_failed, on_round))

        try:
            ticket = self._submit(requests, answer)
        except Exception as e:
            self._generation += 1
            on_failed(e)
            return
        if not answered:
            self._ticket = ticket

    def _next(self, generation: int, target: LayoutTarget, on_ready: Callable[[], None],
              on_failed: Callable[[BaseException], None], on_round: Callable[[dict[str, LayoutRequest]], None]) -> None:
        if generation == self._generation:  # else a newer run (or a stop) has taken over
            self.run(target, on_ready=on_ready, on_failed=on_failed, on_round=on_round)


__all__ = ["LayoutRounds", "LayoutTarget", "lay_out_all", "take_cached"]
