"""GUI speed for programs of about 1k, 4k and 10k nodes (issue 3's targets in brackets):

- time from launch to the first painted graph            [< 1 s at 10k nodes]
- the longest GUI-thread stall while opening (5 ms QTimer heartbeat)  [< 50 ms]
- frame time of a pan and of a zoom step, fully zoomed out and at 1:1  [< 16 ms]
- the GUI process's peak memory                           [< 300 MB]
- first view / floor (issue 14)                           [<= 1.3x]: the floor is a fresh process that starts the window
  (Qt imported, an empty main window painted) and reads the archive's JSON with the standard library (zipfile +
  json.loads of every JSON member): what any viewer of this file must pay. Measured in the same run, just before.

Each measurement runs in a fresh process (`python bench/bench_gui.py --child FILE`), offscreen, with a cold layout
cache and then a warm one (a reopen). Prints figures; asserts nothing. Usage: `.venv/bin/python bench/bench_gui.py
[LAYERS ...]` (default 13 54 135 layers: about 1k, 4k and 10k nodes).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def child(path: str) -> None:
    t0 = time.perf_counter()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from pt2_viewer.app.main_window import MainWindow

    app = QApplication([])
    window = MainWindow(interactive=False)
    window.resize(1400, 900)
    window.show()
    stalls: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def beat() -> None:
        now = clock.elapsed()
        stalls.append(now - last[0])
        last[0] = now

    heartbeat = QTimer(interval=5)
    heartbeat.timeout.connect(beat)
    heartbeat.start()
    result: dict[str, object] = {}

    def ready(doc: object) -> None:
        def painted() -> None:
            if doc.view.painted == 0:  # type: ignore[attr-defined]
                QTimer.singleShot(1, painted)
                return
            result["first_paint_s"] = time.perf_counter() - t0
            heartbeat.stop()
            result["max_stall_ms"] = max(stalls) if stalls else 0.0
            result["frames"] = frames(doc)
            result["visible_items"] = len(doc.view.nodes) + len(doc.view.groups)  # type: ignore[attr-defined]
            result["nodes"] = len(doc.model.program.graph.nodes)  # type: ignore[attr-defined]
            app.quit()

        painted()

    window.document_ready.connect(ready)
    window.open_failed.connect(lambda m: (result.__setitem__("error", m), app.quit()))
    window.open_path(path)
    app.exec()
    window.layouts.close()
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def floor_child(path: str) -> None:
    """The floor: launch, an empty main window painted, and the archive's JSON read with the standard library."""
    t0 = time.perf_counter()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import zipfile

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication([])
    window = QMainWindow()
    window.resize(1400, 900)
    window.show()
    QTimer.singleShot(0, app.quit)  # after the first paint of the shown window
    app.exec()
    shown = time.perf_counter() - t0
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith(".json"):
                json.loads(z.read(name))
    print(json.dumps({"floor_s": time.perf_counter() - t0, "window_s": shown}))


def peak_rss_mb() -> float:
    """This process's peak resident memory. Read VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across
    exec, so a child of this bench (which has torch loaded to build programs) would report the parent's peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def frames(doc) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Milliseconds to repaint after a pan step and a zoom step, zoomed out (fit) and at 1:1."""
    view = doc.view
    out = {}
    steps = (("pan", lambda: view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + 40)),
             ("zoom", lambda: view.zoom(1.1)))
    for label, setup in (("zoomed_out", view.fit), ("1to1", view.resetTransform)):
        setup()
        for action, step in steps:
            times = []
            for _ in range(10):
                step()
                t = time.perf_counter()
                view.viewport().repaint()
                times.append((time.perf_counter() - t) * 1000)
            out[f"{action}_{label}_ms"] = sorted(times)[len(times) // 2]
    return out


def main(layers: list[int]) -> None:
    from bench.big_model import program_path

    print(f"{'nodes':>7} {'cache':>5} {'first paint s':>13} {'max stall ms':>12} {'pan out':>8} {'zoom out':>8} "
          f"{'pan 1:1':>8} {'zoom 1:1':>8} {'peak MB':>8} {'items':>6} {'floor s':>7} {'/ floor [<= 1.3x]':>17}")
    for n in layers:
        path = program_path(n)
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
            floor_run = subprocess.run([sys.executable, __file__, "--floor", str(path)], env=env, capture_output=True,
                                       text=True, timeout=900)
            try:
                floor = float(json.loads(floor_run.stdout.strip().splitlines()[-1])["floor_s"])
            except (IndexError, KeyError, ValueError):
                print(f"floor child failed: {floor_run.stderr[-2000:]}")
                floor = float("nan")
            for cache in ("cold", "warm"):
                run = subprocess.run([sys.executable, __file__, "--child", str(path)], env=env, capture_output=True,
                                     text=True, timeout=900)
                try:
                    r = json.loads(run.stdout.strip().splitlines()[-1])
                except (IndexError, json.JSONDecodeError):
                    print(f"child failed: {run.stderr[-2000:]}")
                    continue
                if "error" in r:
                    print(f"{path.name}: {r['error']}")
                    continue
                f = r["frames"]
                print(f"{r['nodes']:>7} {cache:>5} {r['first_paint_s']:>13.2f} {r['max_stall_ms']:>12.0f} "
                      f"{f['pan_zoomed_out_ms']:>8.1f} {f['zoom_zoomed_out_ms']:>8.1f} {f['pan_1to1_ms']:>8.1f} "
                      f"{f['zoom_1to1_ms']:>8.1f} {r['peak_rss_mb']:>8.0f} {r['visible_items']:>6} {floor:>7.2f} "
                      f"{r['first_paint_s'] / floor:>16.2f}x")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "--floor":
        floor_child(sys.argv[2])
    else:
        main([int(a) for a in sys.argv[1:]] or [13, 54, 135])
