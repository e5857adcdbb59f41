"""A program of about 50,000 nodes in the window (issue 14's targets in brackets):

- launch to the first painted graph                      [< 2 s]
- frame time of a pan and a zoom step, zoomed out and 1:1 [< 16.7 ms: 60 frames per second]
- expanding a group: time until it is drawn, and the longest GUI-thread stall meanwhile (5 ms heartbeat) [no stall
  over 50 ms]; the two shallowest collapsed groups on screen, one after the other
- the GUI process's peak memory                          [< 1 GB]

The program is bench/big_model.py's deep model, core ATen after run_decompositions, about 73 nodes per layer: 685
layers give ~50k nodes (exported once and cached: many minutes on a 2-core machine; `--layers` for other sizes). Each
figure comes from a fresh process, offscreen, with empty caches (cold) and then the layouts and parsed program it
left (reopen), beside the floor (bench_gui.py's: Qt, a window, every JSON member read). Prints figures; asserts
nothing. Usage: `.venv/bin/python bench/bench_50k.py [--layers 685 | --tiles K]` (`--tiles 7`: ~55k nodes,
bench/tiled_program.py, built in a minute where the 685-layer export takes an hour on a loaded 2-core machine).
"""
from __future__ import annotations

import argparse
import json
import os
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
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from bench.bench_gui import frames, peak_rss_mb
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
    result: dict[str, object] = {"expand": []}
    pending: list[str] = []

    def expand_next(doc) -> None:  # type: ignore[no-untyped-def]
        collapsed = [p for p in doc.view.groups if p not in doc.model.level.scene.expanded]
        if not collapsed or len(result["expand"]) >= 2:  # type: ignore[arg-type]
            app.quit()
            return
        path = sorted(collapsed, key=lambda p: (p.count("."), p))[0]
        pending[:] = [path]
        stalls.clear()
        last[0] = clock.elapsed()
        heartbeat.start()
        start = time.perf_counter()

        def drawn() -> None:
            heartbeat.stop()
            result["expand"].append({"group": path, "s": time.perf_counter() - start,  # type: ignore[union-attr]
                                     "max_stall_ms": max(stalls) if stalls else 0.0,
                                     "items": len(doc.view.nodes) + len(doc.view.groups)})
            QTimer.singleShot(0, lambda: expand_next(doc))

        doc.graph_ready.connect(drawn, type=Qt.ConnectionType.SingleShotConnection)
        doc.toggle_group(path)

    def ready(doc) -> None:  # type: ignore[no-untyped-def]
        def painted() -> None:
            if doc.view.painted == 0:
                QTimer.singleShot(1, painted)
                return
            result["first_paint_s"] = time.perf_counter() - t0
            result["cpu_s"] = time.process_time()
            result["frames"] = frames(doc)
            result["nodes"] = len(doc.model.program.graph.nodes)
            result["items"] = len(doc.view.nodes) + len(doc.view.groups)
            QTimer.singleShot(0, lambda: expand_next(doc))

        painted()

    window.document_ready.connect(ready)
    window.open_failed.connect(lambda m: (result.__setitem__("error", m), app.quit()))
    window.open_path(path)
    app.exec()
    window.layouts.close()
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def main() -> None:
    from bench.bench_gui import measure_floor, with_bytecode
    from bench.big_model import program_path
    from bench.tiled_program import tiled_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=685)
    ap.add_argument("--tiles", type=int, default=0, help="instead: bench/tiled_program.py's 135 layers tiled K times "
                    "(7: ~55k nodes, 13: ~100k), built in a minute")
    args = ap.parse_args()
    t = time.perf_counter()
    path = tiled_path(args.tiles) if args.tiles else program_path(args.layers)
    built = time.perf_counter() - t
    print(f"program: {path.name}, {path.stat().st_size / 1e6:.0f} MB (built or found in {built:.0f} s)")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
        env.pop("PT2V_CACHE_DIR", None)
        with_bytecode(env)
        floor = measure_floor(path, env)  # Qt started, a window shown, every JSON member read: (wall, CPU)
        print(f"floor: {floor[0]:.2f} s, {floor[1]:.2f} s CPU")
        for cache in ("cold", "reopen"):  # empty caches (layouts, parsed programs), then the ones it left
            run = subprocess.run([sys.executable, __file__, "--child", str(path)], env=env, capture_output=True,
                                 text=True, timeout=1800)
            try:
                r = json.loads(run.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                print(f"child failed: {run.stderr[-2000:]}")
                continue
            if "error" in r:
                print(f"{path.name}: {r['error']}")
                continue
            f = r["frames"]
            print(f"{r['nodes']} nodes, {cache}: first paint {r['first_paint_s']:.2f} s = "
                  f"{r['first_paint_s'] / floor[0]:.2f}x the floor ({r['cpu_s']:.2f} s CPU = "
                  f"{r['cpu_s'] / floor[1]:.2f}x) [reopen <= 1.5 s at 50k, 2.5 s at 100k], "
                  f"{r['items']} items; frames ms (pan/zoom out, pan/zoom 1:1) {f['pan_zoomed_out_ms']:.1f} / "
                  f"{f['zoom_zoomed_out_ms']:.1f} / {f['pan_1to1_ms']:.1f} / {f['zoom_1to1_ms']:.1f} [< 16.7]; "
                  f"peak {r['peak_rss_mb']:.0f} MB [< 1024]")
            for e in r["expand"]:
                print(f"  expand {e['group']}: drawn in {e['s']:.2f} s, longest stall {e['max_stall_ms']:.0f} ms "
                      f"[< 50], {e['items']} items")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
