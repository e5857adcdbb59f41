"""LayoutService: lays out graphs in a small pool of long-lived child processes, so the GUI thread never waits on
Graphviz, and a round of many group layouts (Expand all) uses every core.

pygraphviz holds the GIL for a whole layout, so a layout in a thread of the GUI process freezes the GUI; in a child
process it cannot. The child (`python -m pt2_viewer.core.layout`) is started on first need and kept, so Python start-up
and the pygraphviz import are paid once. A background thread here does the blocking parts (disk-cache lookups, talking
to the child, decoding replies); the caller's thread only queues work and collects finished tickets:

    service = LayoutService()
    ticket = service.submit([request, ...])       # returns at once
    notifier = QSocketNotifier(service.fileno(), QSocketNotifier.Type.Read)   # readable when tickets finish
    for ticket, outcome in service.poll(): ...    # outcome: list[LayoutResult] or LayoutError
    results = service.wait(ticket, timeout=30)    # or block, for headless use and tests

Tickets run one at a time, in submission order. A ticket's requests of one shape (node sizes and edges, whatever
the ids: a model's repeated layers) are laid out once and answered together; shapes found in the disk cache never
reach a child (a reopen starts no process at all). The shapes left are split by size among up to `processes`
children (one per core by default, `PT2V_LAYOUT_PROCESSES` to change it), each fed by a thread here that only waits
on its pipe; a small ticket uses one child, so a second child starts only when there is enough work to share.
cancel() drops a queued ticket, or kills every child busy with that ticket; a child that dies (killed, crashed) fails
its ticket with a LayoutError and the next ticket starts a fresh child.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import msgspec

from pt2_viewer.core.layout.cache import LayoutCache
from pt2_viewer.core.layout.records import LayoutError, LayoutRequest, LayoutResult, dumps
from pt2_viewer.core.platform import install

if TYPE_CHECKING:
    import subprocess

Outcome = list[LayoutResult] | LayoutError


# Below this many nodes in a ticket's missing requests, one child lays them all out: starting a second child (Python
# and pygraphviz, about 0.3 s) would cost more than sharing saves.
SHARE_ABOVE_NODES = 400


class _Ticket(msgspec.Struct):
    """One `LayoutService.submit`: its requests, and which children are laying them out."""

    number: int
    requests: list[LayoutRequest]
    cancelled: bool = False
    slots: set[int] = msgspec.field(default_factory=set)  # the children (by slot) laying out part of it now

    @property
    def in_child(self) -> bool:
        return bool(self.slots)


class _Cancelled(Exception):
    """The current ticket was cancelled (or the service closed) while it was being served."""


class LayoutService:
    """A pool of layout child processes behind a non-blocking ticket queue. Usable without Qt. Call close() when
    done."""

    def __init__(
        self,
        cache_dir: str | os.PathLike[str] | None = None,
        *,
        use_cache: bool = True,
        python: str = sys.executable,
        processes: int | None = None,
    ) -> None:
        self.cache: LayoutCache | None = LayoutCache(cache_dir) if use_cache else None
        self._python = python
        self._cond = threading.Condition()
        self._queue: deque[_Ticket] = deque()
        self._current: _Ticket | None = None
        self._done: dict[int, Outcome] = {}
        self._cancelled: set[int] = set()
        self._next_ticket = 1
        self._procs: list[subprocess.Popen[bytes] | None] = [None] * (processes or default_processes())
        self._closed = False
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        # What the service did, for tests and benchmarks: child processes started; requests asked for; of those,
        # answered by another request of the same shape in their ticket (reused), shapes found in the disk cache
        # (cache_hits) and shapes Graphviz laid out (laid_out): asked = reused + cache_hits + laid_out.
        self.child_starts = 0
        self.asked = self.reused = self.cache_hits = self.laid_out = 0

    @property
    def processes(self) -> int:
        """The most children this service runs at once."""
        return len(self._procs)

    # ---- the caller's side: none of these block on layout work ----

    def submit(self, requests: list[LayoutRequest]) -> int:
        """Queue a batch of requests; returns its ticket at once."""
        batch = list(requests)
        for request in batch:
            if not isinstance(request, LayoutRequest):
                raise TypeError(f"submit() takes LayoutRequest objects, got {type(request).__name__}")
        with self._cond:
            if self._closed:
                raise RuntimeError("this LayoutService is closed; create a new one")
            number = self._next_ticket
            self._next_ticket += 1
            self._queue.append(_Ticket(number, batch))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve_forever, name="layout-service", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return number

    def prestart(self) -> threading.Thread:
        """Start the first child now, in a thread (returned), so that the first layout does not wait for its Python
        to start: a window calls this when it begins reading a program, and the child starts on the other core
        meanwhile. Starts nothing when a child is running or the service is closed."""

        def start() -> None:
            with self._cond:
                if not self._closed:
                    try:
                        self._running_child(0)
                    except LayoutError:
                        pass  # said, with its reason, when a layout needs the child

        thread = threading.Thread(target=start, name="layout-prestart", daemon=True)
        thread.start()
        return thread

    def fileno(self) -> int:
        """A file descriptor that is readable while poll() has finished tickets to return (for QSocketNotifier)."""
        return self._wake_r

    def poll(self) -> list[tuple[int, Outcome]]:
        """The tickets finished since the last poll()/wait(), in ticket order. Never blocks."""
        try:
            while os.read(self._wake_r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass
        with self._cond:
            finished = sorted(self._done.items())
            self._done.clear()
        return finished

    def wait(self, ticket: int, timeout: float | None = None) -> list[LayoutResult]:
        """Block until `ticket` finishes and return its results; raises LayoutError if it failed or was cancelled,
        TimeoutError after `timeout` seconds, KeyError for a ticket this service does not know (or already returned)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while ticket not in self._done:
                if ticket in self._cancelled:
                    raise LayoutError(f"layout ticket {ticket} was cancelled")
                if not self._is_pending(ticket):
                    raise KeyError(f"unknown layout ticket {ticket} (never submitted, or already collected)")
                if not self._cond.wait(None if deadline is None else max(0.0, deadline - time.monotonic())):
                    if ticket not in self._done:
                        raise TimeoutError(f"layout ticket {ticket} not finished after {timeout} s")
            outcome = self._done.pop(ticket)
        if isinstance(outcome, LayoutError):
            raise outcome
        return outcome

    def wait_in_child(self, ticket: int, timeout: float | None = None) -> bool:
        """Block until `ticket` is in the child's hands (or finished); False on timeout. For tests and benchmarks."""
        with self._cond:
            return self._cond.wait_for(
                lambda: (self._current is not None and self._current.number == ticket and self._current.in_child)
                or not self._is_pending(ticket),
                timeout,
            )

    def cancel(self, ticket: int) -> None:
        """Forget `ticket`: dropped if queued; the children laying it out are killed at once (new ones start for the
        next ticket). Its outcome is never reported. Unknown or finished tickets are ignored."""
        with self._cond:
            self._done.pop(ticket, None)
            for queued in self._queue:
                if queued.number == ticket:
                    self._queue.remove(queued)
                    self._cancelled.add(ticket)
                    break
            current = self._current
            if current is not None and current.number == ticket:
                current.cancelled = True
                self._cancelled.add(ticket)
                for slot in current.slots:
                    proc = self._procs[slot]
                    if proc is not None:
                        proc.kill()
            self._cond.notify_all()

    @property
    def child_pid(self) -> int | None:
        """The first running child's process id (the one a one-request ticket uses), or None while there is none."""
        with self._cond:
            return next((proc.pid for proc in self._procs if proc is not None), None)

    def close(self) -> None:
        """Stop the child and the background thread. Unfinished tickets are dropped. Safe to call twice."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            for proc in self._procs:
                if proc is not None:
                    proc.kill()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                return  # still busy: leave the wake pipe open rather than let it write into a reused fd
        os.close(self._wake_r)
        os.close(self._wake_w)

    def __enter__(self) -> LayoutService:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _is_pending(self, ticket: int) -> bool:
        """Queued or being served (call with the lock held)."""
        current = self._current
        return (current is not None and current.number == ticket) or any(t.number == ticket for t in self._queue)

    # ---- the background thread ----

    def _serve_forever(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed)
                if self._closed:
                    break
                ticket = self._queue.popleft()
                self._current = ticket
            try:
                outcome: Outcome | None = self._serve(ticket)
            except _Cancelled:
                outcome = None
            except LayoutError as exc:
                outcome = exc
            except Exception as exc:  # a bug here must not kill the thread and hang every later wait()
                outcome = LayoutError(f"layout service failed: {type(exc).__name__}: {exc}")
            with self._cond:
                self._current = None
                if outcome is not None and not ticket.cancelled and not self._closed:
                    self._done[ticket.number] = outcome
                    try:
                        os.write(self._wake_w, b"!")
                    except (BlockingIOError, OSError):
                        pass  # the pipe is full, so it is readable already
                self._cond.notify_all()
        self._stop_children()

    def _serve(self, ticket: _Ticket) -> list[LayoutResult]:
        """Answer a ticket: each shape once (`LayoutRequest.shape`: a model's repeated layers are one shape), from the
        cache or from the children, named back for every request of that shape."""
        requests = ticket.requests
        shapes: dict[str, tuple[dict[str, Any], list[int]]] = {}  # shape's JSON -> (shape, its requests), in order
        for i, request in enumerate(requests):
            shape = request.shape()
            shapes.setdefault(dumps(shape), (shape, []))[1].append(i)
        shaped: dict[str, LayoutResult] = {}
        if self.cache is not None:
            for text, (shape, _members) in shapes.items():
                hit = self.cache.get_shaped(self.cache.shape_key(text), len(shape["nodes"]), len(shape["edges"]))
                if hit is not None:
                    shaped[text] = hit
        missing = [text for text in shapes if text not in shaped]
        self.asked += len(requests)
        self.reused += len(requests) - len(shapes)
        self.cache_hits += len(shaped)
        if missing:
            hints = [requests[shapes[text][1][0]].key_hint for text in missing]  # names the shape in errors
            to_send = [LayoutRequest.from_json_obj({**shapes[text][0], "key_hint": hint})
                       for text, hint in zip(missing, hints)]
            shaped.update(zip(missing, self._ask_children(ticket, to_send), strict=True))
            self.laid_out += len(missing)
        results: list[LayoutResult | None] = [None] * len(requests)
        for text, (_shape, members) in shapes.items():
            for i in members:
                results[i] = shaped[text].named_for(requests[i])
        return results  # type: ignore[return-value]  # every slot is filled now

    def _ask_children(self, ticket: _Ticket, requests: list[LayoutRequest]) -> list[LayoutResult]:
        """Lay out `requests`, shared among the pool's children: each share in a thread of its own that waits on its
        child's pipe (no GIL held while Graphviz works), the first share in this thread."""
        shares = share_out(requests, self.processes)
        if len(shares) == 1:
            return self._ask_child(0, ticket, requests)
        results: list[LayoutResult | None] = [None] * len(requests)
        failures: list[BaseException] = []

        def lay_out(slot: int, share: list[int]) -> None:
            try:
                for i, result in zip(share, self._ask_child(slot, ticket, [requests[i] for i in share]), strict=True):
                    results[i] = result
            except BaseException as exc:  # handed to the serving thread below
                failures.append(exc)

        helpers = [threading.Thread(target=lay_out, args=(slot, share), name=f"layout-share-{slot}", daemon=True)
                   for slot, share in enumerate(shares[1:], start=1)]
        for helper in helpers:
            helper.start()
        lay_out(0, shares[0])
        for helper in helpers:
            helper.join()
        if failures:
            raise next((f for f in failures if isinstance(f, _Cancelled)), failures[0])
        return results  # type: ignore[return-value]  # every slot is filled when nothing failed

    def _ask_child(self, slot: int, ticket: _Ticket, requests: list[LayoutRequest]) -> list[LayoutResult]:
        with self._cond:
            if ticket.cancelled or self._closed:
                raise _Cancelled
            proc = self._running_child(slot)
            ticket.slots.add(slot)
            self._cond.notify_all()
        message = dumps({"ticket": ticket.number, "requests": [r.to_json_obj() for r in requests]})
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(message.encode("utf-8") + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError:  # BrokenPipeError: the child died before reading
            line = b""
        with self._cond:
            ticket.slots.discard(slot)  # a cancel from now on must not kill the (idle) child
        if not line:
            code = self._reap(slot, proc)
            if ticket.cancelled or self._closed:
                raise _Cancelled
            raise LayoutError(
                f"the layout process stopped ({_describe_exit(code)}) while laying out {_describe(requests)}; "
                "its error output, if any, is on this program's stderr; the next layout starts a new one"
            )
        try:
            reply = json.loads(line)
            if reply.get("ticket") != ticket.number:
                raise ValueError(f"reply for ticket {reply.get('ticket')!r}, expected {ticket.number}")
            if "error" in reply:
                raise LayoutError(str(reply["error"]))
            results = [LayoutResult.from_json_obj(obj) for obj in reply["results"]]
            if len(results) != len(requests):
                raise ValueError(f"{len(results)} results for {len(requests)} requests")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # the child is out of step: replace it
            proc.kill()
            self._reap(slot, proc)
            raise LayoutError(f"the layout process answered nonsense ({exc}); it was restarted") from exc
        return results

    def _running_child(self, slot: int) -> subprocess.Popen[bytes]:
        """The live child in `slot`, started if there is none (call with the lock held)."""
        proc = self._procs[slot]
        if proc is not None and proc.poll() is None:
            return proc
        if proc is not None:  # died while idle: clean up quietly, its death cost no ticket
            self._close_pipes(proc)
        command = [self._python, "-m", "pt2_viewer.core.layout"]
        if self.cache is not None:
            command += ["--cache-dir", str(self.cache.directory)]
        env = dict(os.environ)
        root = install.package_parent()
        if install.from_checkout():
            # run from a source checkout: the child must import this same checkout, whatever the current folder.
            # (Installed, `pt2_viewer` is on the child's path anyway, and site-packages must not go ahead of the
            # stdlib.)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
        try:
            import subprocess  # deferred: a reopen's layouts all come from the cache, and start no child

            started = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True
            )
        except OSError as exc:
            self._procs[slot] = None
            raise LayoutError(f"could not start the layout process {command[0]!r}: {exc}") from exc
        self._procs[slot] = started
        self.child_starts += 1
        return started

    def _reap(self, slot: int, proc: subprocess.Popen[bytes]) -> int:
        code = proc.wait()
        self._close_pipes(proc)
        with self._cond:
            if self._procs[slot] is proc:
                self._procs[slot] = None
        return code

    def _stop_children(self) -> None:
        with self._cond:
            procs = list(enumerate(self._procs))
        for slot, proc in procs:
            if proc is not None:
                proc.kill()
                self._reap(slot, proc)

    @staticmethod
    def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass


def default_processes() -> int:
    """One child per core this process may use, at most 8; `PT2V_LAYOUT_PROCESSES` overrides it."""
    wanted = os.environ.get("PT2V_LAYOUT_PROCESSES", "").strip()
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def share_out(requests: list[LayoutRequest], processes: int) -> list[list[int]]:
    """Split requests (by index) into at most `processes` shares of about equal work, biggest first to the least
    loaded share; each share keeps the requests' order. One share when the work is too small to be worth a second
    child. A request's work is counted as its nodes plus edges (dot's cost grows a little faster; near enough)."""
    work = [len(r.nodes) + len(r.edges) for r in requests]
    parts = min(processes, len(requests))
    if parts <= 1 or sum(len(r.nodes) for r in requests) < SHARE_ABOVE_NODES:
        return [list(range(len(requests)))]
    shares: list[list[int]] = [[] for _ in range(parts)]
    loads = [0] * parts
    for i in sorted(range(len(requests)), key=lambda i: -work[i]):
        least = loads.index(min(loads))
        shares[least].append(i)
        loads[least] += work[i]
    return [sorted(share) for share in shares if share]


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _describe(requests: list[LayoutRequest]) -> str:
    nodes = sum(len(r.nodes) for r in requests)
    hints = [r.key_hint for r in requests if r.key_hint][:3]
    if not hints:
        return f"{len(requests)} graph(s) of {nodes} nodes"
    more = ", ..." if len(requests) > len(hints) else ""
    return f"{len(requests)} graph(s) of {nodes} nodes ({', '.join(hints)}{more})"
