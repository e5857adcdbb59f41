"""GUI speed for programs of about 1k, 4k and 10k nodes (issue 3's targets in brackets):

- time from launch to the first painted graph            [< 1 s at 10k nodes]
- the longest GUI-thread stall while opening (5 ms QTimer heartbeat)  [< 50 ms]
- frame time of a pan and of a zoom step, fully zoomed out and at 1:1  [< 16 ms]
- the GUI process's peak memory                           [< 300 MB]
- first view / floor (issue 14)                           [<= 1.3x]: the floor is a fresh process that starts the window
  (Qt imported, an empty main window painted) and reads the archive's JSON with the standard library (zipfile +
  json.loads of every JSON member): what any viewer of this file must pay. Measured in the same run, just before.

Each measurement runs in a fresh process (`python bench/bench_gui.py --child FILE`), offscreen, with empty caches
(layouts and parsed programs: "cold") and then the caches it left ("reopen"), with compiled bytecode as an install
has it. Prints figures; asserts nothing. Usage: `.venv/bin/python bench/bench_gui.py [--repeat N] [--tiles K]
[--against TREE] [LAYERS ...]` (default 13 54 135 layers: about 1k, 4k and 10k nodes; `--tiles 13`:
bench/tiled_program.py's ~100k nodes; N rounds each, medians of the ratios at the end). `--against TREE`: another
checkout of the viewer (an older commit, `git worktree add`) opens the same program cold and on reopen in each round
too, its rows marked "(other)": a before/after in one run, under the same load, the two trees taking turns to go
first (the one measured second ran 2-3% slower on this machine).
"""
from __future__ import annotations

import json
import os
import resource
import statistics
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

    from pt2_viewer.app.main import new_window  # the app's own start-up (the views' imports, the one gc.freeze)
    from pt2_viewer.app.qt import application

    app = application()
    window = new_window(interactive=False)
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
            result["cpu_s"] = time.process_time()  # this process's CPU (all its threads) since it started
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
    print(json.dumps({"floor_s": time.perf_counter() - t0, "window_s": shown, "cpu_s": time.process_time()}))


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


def with_bytecode(env: dict[str, str], tree: Path = REPO) -> None:
    """Compiled bytecode as an installed viewer has it (a wheel's install writes it): kept under .cache/, compiled
    once before the first measurement. Without it (PYTHONDONTWRITEBYTECODE), start-up compiles ~200 modules: 0.8 s."""
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(REPO / ".cache" / ("bench-pycache" if tree == REPO else "bench-pycache-other"))
    code = "import pt2_viewer.app.main_window, pt2_viewer.core.pt2.parsed_cache, msgspec"
    subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, check=False, timeout=600)


def measure_floor(path: object, env: dict[str, str]) -> tuple[float, float]:
    """The floor's wall time and CPU time (the CPU time moves far less with other work on a shared machine)."""
    floor_run = subprocess.run([sys.executable, __file__, "--floor", str(path)], env=env, capture_output=True,
                               text=True, timeout=900)
    try:
        r = json.loads(floor_run.stdout.strip().splitlines()[-1])
        return float(r["floor_s"]), float(r["cpu_s"])
    except (IndexError, KeyError, ValueError):
        print(f"floor child failed: {floor_run.stderr[-2000:]}")
        return float("nan"), float("nan")


def run_child(path: object, env: dict[str, str], tree: Path = REPO) -> dict | None:  # type: ignore[type-arg]
    run = subprocess.run([sys.executable, str(tree / "bench" / "bench_gui.py"), "--child", str(path)], env=env,
                         capture_output=True, text=True, timeout=900, cwd=tree)
    try:
        r = json.loads(run.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        print(f"child failed: {run.stderr[-2000:]}")
        return None
    if "error" in r:
        print(f"{path}: {r['error']}")
        return None
    return r  # type: ignore[no-any-return]


def other_tree(path: object, env: dict[str, str], tree: Path) -> dict[str, dict | None]:  # type: ignore[type-arg]
    """Cold and reopen of the same program by another checkout, with caches of its own."""
    with tempfile.TemporaryDirectory() as home:
        other = {**env, "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home}
        with_bytecode(other, tree)
        return {f"{cache} (other)": run_child(path, other, tree) for cache in ("cold", "reopen")}


def main(layers: list[int], repeat: int, tiles: list[int] | None = None, against: Path | None = None) -> None:
    """Per size, `repeat` rounds of: floor, cold open (empty caches), reopen (the caches it left), the reopen again
    without the parsed-program cache (its JSON read; PT2V_PROGRAM_CACHE_MB=0), floor again. Each
    open's ratio is to its own round's floors (their mean), so a load that comes and goes on a shared machine moves
    both; the medians of the rounds close the table."""
    from bench.big_model import program_path
    from bench.tiled_program import tiled_path

    print(f"{'nodes':>7} {'cache':>14} {'first paint s':>13} {'max stall ms':>12} {'pan out':>8} {'zoom out':>8} "
          f"{'pan 1:1':>8} {'zoom 1:1':>8} {'peak MB':>8} {'items':>6} {'floor s':>7} {'/ floor':>8}"
          f" {'CPU s':>6} {'floor':>6} {'/ floor':>7}")
    for path in [program_path(n) for n in layers] + [tiled_path(k) for k in tiles or []]:
        ratios: dict[str, list[float]] = {"cold": [], "reopen": [], "reopen, JSON": []}
        if against is not None:
            ratios.update({"cold (other)": [], "reopen (other)": []})
        cpu_ratios: dict[str, list[float]] = {k: [] for k in ratios}
        for i in range(repeat):
            with tempfile.TemporaryDirectory() as home:
                env = {**os.environ, "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
                env.pop("PT2V_CACHE_DIR", None)
                with_bytecode(env)
                before = measure_floor(path, env)
                runs: dict[str, dict | None] = {}  # type: ignore[type-arg]
                # every other round the other tree goes first: the one measured second ran 2-3% slower here
                other_first = against is not None and i % 2 == 1
                if other_first:
                    runs.update(other_tree(path, env, against))  # type: ignore[arg-type]
                runs.update({cache: run_child(path, env) for cache in ("cold", "reopen")})
                # the same reopen reading the JSON (no parsed-program cache; layouts still cached): what it saves
                runs["reopen, JSON"] = run_child(path, {**env, "PT2V_PROGRAM_CACHE_MB": "0"})
                if against is not None and not other_first:
                    runs.update(other_tree(path, env, against))
                after = measure_floor(path, env)
                floor, floor_cpu = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
            for cache in ratios:  # in the table's order, whichever ran first
                r = runs.get(cache)
                if r is None:
                    continue
                f = r["frames"]
                ratios[cache].append(r["first_paint_s"] / floor)
                cpu_ratios[cache].append(r["cpu_s"] / floor_cpu)
                print(f"{r['nodes']:>7} {cache:>14} {r['first_paint_s']:>13.2f} {r['max_stall_ms']:>12.0f} "
                      f"{f['pan_zoomed_out_ms']:>8.1f} {f['zoom_zoomed_out_ms']:>8.1f} {f['pan_1to1_ms']:>8.1f} "
                      f"{f['zoom_1to1_ms']:>8.1f} {r['peak_rss_mb']:>8.0f} {r['visible_items']:>6} {floor:>7.2f} "
                      f"{r['first_paint_s'] / floor:>7.2f}x {r['cpu_s']:>6.2f} {floor_cpu:>6.2f} "
                      f"{r['cpu_s'] / floor_cpu:>6.2f}x")
        print("  median first paint / floor: " + ", ".join(
            f"{cache} {statistics.median(v):.2f}x" for cache, v in ratios.items() if v)
              + "  [issue 32: cold <= 1.5x, reopen <= 1.0x]")
        print("  median CPU to first paint / floor's CPU: " + ", ".join(
            f"{cache} {statistics.median(v):.2f}x" for cache, v in cpu_ratios.items() if v))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "--floor":
        floor_child(sys.argv[2])
    else:
        args = sys.argv[1:]
        rounds = 1
        if "--repeat" in args:
            i = args.index("--repeat")
            rounds = int(args[i + 1])
            del args[i:i + 2]
        tiles = []
        while "--tiles" in args:  # bench/tiled_program.py: K copies of the 135-layer graph (13: ~100k nodes)
            i = args.index("--tiles")
            tiles.append(int(args[i + 1]))
            del args[i:i + 2]
        against = None
        if "--against" in args:  # another checkout, measured in the same rounds (a before/after under one load)
            i = args.index("--against")
            against = Path(args[i + 1]).resolve()
            del args[i:i + 2]
        main([int(a) for a in args] or ([] if tiles else [13, 54, 135]), rounds, tiles, against)
