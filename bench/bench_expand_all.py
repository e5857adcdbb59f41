"""Expand all on a 10k-node program (bench/big_model.py's 135 layers, core ATen), cold layout cache.

Two measures, each in a fresh process with an empty layout cache in a temporary folder (child start-up charged):

- **window**: the program opened in the real window (offscreen), then Expand all clicked; the time from the click to
  the expanded graph painted, the longest GUI-thread stall meanwhile (5 ms heartbeat), what the status line said, and
  the layout service's counters (groups asked for, laid out by Graphviz, reused from an identical group, cache hits).
- **service**: the layout rounds alone, as the window sends them (no Qt), through one child and through the pool.

Prints figures; asserts nothing. `--profile FILE` writes a cProfile of the window's GUI process from the click to the
paint. Usage: `.venv/bin/python bench/bench_expand_all.py [--layers 135] [--repeat 1] [--profile out.prof]`.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def expand_all(path: Path, processes: int) -> tuple[float, int, int, int]:
    """Seconds to lay out everything Expand all shows, the rounds it took, the groups asked for and laid out."""
    from pt2_viewer.core.graph.index import GraphIndex
    from pt2_viewer.core.graph.scene import SceneModel
    from pt2_viewer.core.layout import LayoutService
    from pt2_viewer.core.pt2.reader import read_archive

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
        return time.perf_counter() - started, rounds, groups, _counters(service)[1]


def _counters(service) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    return service.asked, service.laid_out, service.reused, service.cache_hits


def window_child(path: str, profile: str) -> None:
    """In a fresh process: open `path` in the window, click Expand all, print one JSON line of figures."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from pt2_viewer.app.main_window import MainWindow

    app = QApplication([])
    window = MainWindow(interactive=False)
    window.resize(1400, 900)
    window.show()
    clock = QElapsedTimer()
    clock.start()
    stalls: list[float] = []
    last = [clock.elapsed()]

    def beat() -> None:
        now = clock.elapsed()
        stalls.append(now - last[0])
        last[0] = now

    heartbeat = QTimer(interval=5)
    heartbeat.timeout.connect(beat)
    result: dict[str, object] = {}
    statuses: list[str] = []
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()

    gc_started = [0.0]
    gc_s = [0.0]

    def collected(phase: str, _info: dict[str, int]) -> None:  # the cyclic GC's pauses, click to paint
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            gc_s[0] += time.perf_counter() - gc_started[0]

    def click(doc) -> None:  # type: ignore[no-untyped-def]
        if doc.view.painted == 0:
            QTimer.singleShot(1, lambda: click(doc))
            return
        doc.status.connect(statuses.append)
        gc.callbacks.append(collected)
        service = window.layouts.service
        before = _counters(service)
        start = time.perf_counter()

        def painted() -> None:
            if doc.view.painted == 0:
                QTimer.singleShot(1, painted)
                return
            heartbeat.stop()
            gc.callbacks.remove(collected)
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(profile)
            after = _counters(service)
            result.update(s=time.perf_counter() - start, max_stall_ms=max(stalls, default=0.0),
                          nodes=len(doc.model.program.graph.nodes), items=len(doc.view.nodes) + len(doc.view.groups),
                          status=statuses[-1] if statuses else "", gc_s=gc_s[0],
                          counts=dict(zip(("asked", "laid_out", "reused", "cache_hits"),
                                          (b - a for a, b in zip(before, after)))))
            app.quit()

        doc.graph_ready.connect(painted, type=Qt.ConnectionType.SingleShotConnection)
        last[0] = clock.elapsed()
        heartbeat.start()
        if profiler is not None:
            profiler.enable()
        doc.expand_all()

    window.document_ready.connect(click)
    window.open_failed.connect(lambda m: (result.__setitem__("error", m), app.quit()))
    window.open_path(path)
    app.exec()
    window.layouts.close()
    print(json.dumps(result))


def measure_window(path: Path, profile: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
        env.pop("PT2V_CACHE_DIR", None)
        run = subprocess.run([sys.executable, __file__, "--child", str(path), profile], env=env, capture_output=True,
                             text=True, timeout=1800)
    try:
        return json.loads(run.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
    except (IndexError, json.JSONDecodeError):
        return {"error": f"child failed: {run.stderr[-2000:]}"}


def main() -> int:
    from bench.big_model import program_path
    from pt2_viewer.core.layout.service import default_processes

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=135)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", default="", help="write a cProfile of the window's click-to-paint to this file")
    args = ap.parse_args()
    path = program_path(args.layers)
    pool = default_processes()
    print(f"Expand all, {args.layers} layers ({path.name}), cold layout cache; pool = {pool} children")
    for _ in range(args.repeat):
        r = measure_window(path, args.profile)
        if "error" in r:
            print(f"  window: {r['error']}")
        else:
            print(f"  window: click to painted {r['s']:.2f} s [<= 2 s], longest stall {r['max_stall_ms']:.0f} ms, "
                  f"GC {r['gc_s']:.2f} s, {r['nodes']} nodes, {r['items']} items; status: {r['status']!r}; "
                  f"service: {r['counts']}")
        one, rounds, groups, laid_out = expand_all(path, 1)
        print(f"  service, one child  {one:6.2f} s   ({groups} groups in {rounds} rounds, {laid_out} by Graphviz)")
        if pool > 1:
            many, _, _, _ = expand_all(path, pool)
            print(f"  service, {pool} children {many:6.2f} s   = {many / one:.2f}x the one-child time")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        window_child(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
    else:
        raise SystemExit(main())
