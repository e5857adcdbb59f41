"""Memory that comes back: open a 10k-node program, Expand all, close the tab, six times in one window.

Each round's resident memory (RSS, after the tab is gone and its deferred deletes ran) is printed, and the growth per
round after the first (the first round also loads modules, fonts and caches once). A closed tab that stays in memory
shows as tens of MB a round (issue 42 measured +55 MB a round when every open was frozen out of the cyclic
collector); the target is at most 5 MB a round. The collector is not called by hand: the rounds measure what a user's
process keeps. A last line gives the RSS after one explicit `gc.collect()`, for comparison.

    .venv/bin/python bench/bench_close.py [--layers 135] [--rounds 6]

The program is the tests' 10k-node fixture (tests/big_programs.py, bench/big_model.py's 135 layers), built once. It is
opened and closed once before the rounds, and the rounds wait until its parsed-program cache entry is written: a
program read from its JSON keeps its parsed copy for the cache until then (app/graph/loader.py `STORE_AFTER_S`, 20 s),
so six rounds inside those 20 s would each hold one, which is no leak. Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=135)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from tests.big_programs import big_program

    path = big_program(args.layers)
    from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop, QTimer

    from pt2_viewer.app.graph.loader import STORE_AFTER_S
    from pt2_viewer.app.main import new_window
    from pt2_viewer.app.qt import application

    app = application()
    window = new_window(interactive=False, remember_recent=False)
    window.resize(1400, 900)
    window.show()

    def wait(signal: object, start: object) -> object:
        loop, got = QEventLoop(), []
        signal.connect(lambda *a: (got.append(a), loop.quit()))  # type: ignore[attr-defined]
        QTimer.singleShot(0, start)  # type: ignore[arg-type]
        QTimer.singleShot(600_000, loop.quit)
        loop.exec()
        signal.disconnect()  # type: ignore[attr-defined]
        if not got:
            raise SystemExit("timed out")
        return got[0]

    (doc,) = wait(window.document_ready, lambda: window.open_path(str(path)))  # type: ignore[misc]
    del doc
    window.close_tab(window.tabs.currentIndex())
    time.sleep(STORE_AFTER_S + 2)  # its parsed-program cache entry written, if this open was its first
    print(f"{path.name}: {args.rounds} rounds of open, Expand all, close")
    print(f"{'round':>5} {'open s':>7} {'expand s':>9} {'RSS open MB':>12} {'RSS closed MB':>14}")
    closed: list[float] = []
    for i in range(args.rounds):
        t = time.perf_counter()
        (doc,) = wait(window.document_ready, lambda: window.open_path(str(path)))  # type: ignore[misc]
        opened = time.perf_counter() - t
        t = time.perf_counter()
        wait(doc.graph_ready, doc.expand_all)
        expanded = time.perf_counter() - t
        held = rss_mb()
        del doc
        window.close_tab(window.tabs.currentIndex())
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()
        closed.append(rss_mb())
        print(f"{i + 1:>5} {opened:>7.2f} {expanded:>9.2f} {held:>12.0f} {closed[-1]:>14.0f}")
    if len(closed) > 1:
        growth = (closed[-1] - closed[0]) / (len(closed) - 1)
        print(f"growth after the first round: {growth:+.1f} MB a round (target: at most 5)")
    gc.collect()
    print(f"after one gc.collect(): {rss_mb():.0f} MB")
    window.layouts.close()


if __name__ == "__main__":
    main()
