"""Expand all on a 10k-node program (bench/big_model.py's 135 layers, core ATen), cold layout cache.

Two measures, each in a fresh process with an empty layout cache in a temporary folder (child start-up charged):

- **window**: the program opened in the real window (offscreen), then Expand all clicked; the time from the click to
  the expanded graph painted, the longest GUI-thread stall meanwhile (5 ms heartbeat), what the status line said, and
  the layout service's counters (groups asked for, laid out by Graphviz, reused from an identical group, cache hits).
- **service**: the layout rounds alone, as the window sends them (no Qt), through one child and through the pool.

Prints figures; asserts nothing. `--profile FILE` writes a cProfile of the window's GUI process from the click to the
paint; `--screenshot PREFIX` saves the window after it. Usage:
`.venv/bin/python bench/bench_expand_all.py [--layers 135] [--repeat 1] [--profile out.prof] [--screenshot out]`.
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


def _children_cpu(service) -> float:  # type: ignore[no-untyped-def]
    """CPU seconds the service's live layout children have used (Linux /proc), for a figure the load moves less."""
    total = 0.0
    for proc in getattr(service, "_procs", []):
        try:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (AttributeError, OSError, IndexError, ValueError):
            pass  # no child in that slot, or not Linux
    return total


def _counters(service) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    return tuple(getattr(service, name, 0) for name in ("asked", "laid_out", "reused", "cache_hits"))  # 0: none yet


def window_child(path: str, profile: str, shot: str) -> None:
    """In a fresh process: open `path` in the window, click Expand all, print one JSON line of figures."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from pt2_viewer.app.main_window import MainWindow

    class Stalls:
        """How late a 5 ms timer on the GUI thread fires: its longest gap is the worst stall."""

        def __init__(self) -> None:
            self.gaps: list[float] = []
            self.last = 0.0
            self.timer = QTimer(interval=5)
            self.timer.timeout.connect(self.beat)

        def start(self) -> None:
            self.last = time.perf_counter()
            self.timer.start()

        def beat(self) -> None:
            now = time.perf_counter()
            self.gaps.append((now - self.last) * 1000)
            self.last = now

        def stop(self) -> float:
            self.timer.stop()
            return max(self.gaps, default=0.0)

    app = QApplication([])
    window = MainWindow(interactive=False)
    window.resize(1400, 900)
    window.show()
    stalls = Stalls()
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
        cpu = time.process_time(), _children_cpu(service)
        start = time.perf_counter()

        def painted() -> None:
            if doc.view.painted == 0:
                QTimer.singleShot(1, painted)
                return
            elapsed = time.perf_counter() - start
            cpu_s = (time.process_time() - cpu[0], _children_cpu(service) - cpu[1])
            worst = stalls.stop()
            gc.callbacks.remove(collected)
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(profile)
            if shot:  # what Expand all shows, then the middle of the model (three layers) zoomed to fit
                window.grab().save(f"{shot}-start.png")
                middle = sorted(doc.view.groups.values(), key=lambda g: g.sceneBoundingRect().center().y())
                doc.view.fitInView(middle[len(middle) // 2].sceneBoundingRect().adjusted(0, -1500, 0, 1500),
                                   Qt.AspectRatioMode.KeepAspectRatio)
                app.processEvents()
                window.grab().save(f"{shot}-middle.png")
            after = _counters(service)
            result.update(s=elapsed, max_stall_ms=worst, cpu_s=cpu_s,
                          nodes=len(doc.model.program.graph.nodes), items=len(doc.view.nodes) + len(doc.view.groups),
                          status=statuses[-1] if statuses else "", gc_s=gc_s[0],
                          counts=dict(zip(("asked", "laid_out", "reused", "cache_hits"),
                                          (b - a for a, b in zip(before, after)))))
            app.quit()

        doc.graph_ready.connect(painted, type=Qt.ConnectionType.SingleShotConnection)
        stalls.start()
        if profiler is not None:
            profiler.enable()
        doc.expand_all()

    window.document_ready.connect(click)
    window.open_failed.connect(lambda m: (result.__setitem__("error", m), app.quit()))
    window.open_path(path)
    app.exec()
    window.layouts.close()
    print(json.dumps(result))


def measure_window(path: Path, profile: str, shot: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
        env.pop("PT2V_CACHE_DIR", None)
        run = subprocess.run([sys.executable, __file__, "--child", str(path), profile, shot], env=env,
                             capture_output=True, text=True, timeout=1800)
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
    ap.add_argument("--screenshot", default="", help="save the window after Expand all as PREFIX-start.png, and "
                    "zoomed on the middle of the model as PREFIX-middle.png")
    args = ap.parse_args()
    path = program_path(args.layers)
    pool = default_processes()
    print(f"Expand all, {args.layers} layers ({path.name}), cold layout cache; pool = {pool} children")
    for _ in range(args.repeat):
        r = measure_window(path, args.profile, args.screenshot)
        if "error" in r:
            print(f"  window: {r['error']}")
        else:
            cpu = r["cpu_s"]
            print(f"  window: click to painted {r['s']:.2f} s [<= 2 s] (CPU: window {cpu[0]:.2f} s, layout children "
                  f"{cpu[1]:.2f} s), longest stall {r['max_stall_ms']:.0f} ms, "
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
        window_child(sys.argv[2], *(sys.argv[3:5] + ["", ""])[:2])
    else:
        raise SystemExit(main())
