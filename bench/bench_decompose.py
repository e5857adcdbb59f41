"""Click-to-result time of the decompose job on a ~4k-node program (training IR of a deep transformer-like model).

"Click to result" is what the user waits for: the worker process starts, imports torch, loads the `.pt2`, decomposes
to core ATen, maps nodes, writes the new `.pt2` and mapping JSON, and the client reads result.json. The job's own
breakdown (load, decompose, map, save) is printed beside it. Prints figures; asserts nothing.

Usage: `.venv/bin/python bench/bench_decompose.py [LAYERS]` (default 110 layers: about 4k nodes). The exported
program is built and cached by bench/big_model.py.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> None:
    from bench.big_model import program_path
    from pt2_viewer.core.jobs.client import run_job

    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 110
    t = time.perf_counter()
    src = program_path(layers, decompose=False)
    print(f"program: {src.name} (built or found in {time.perf_counter() - t:.1f} s)")
    with tempfile.TemporaryDirectory(prefix="pt2v-bench-") as out:
        t = time.perf_counter()
        _job, outcome = run_job("decompose", {"program": str(src), "to": "core"}, out, timeout_s=1800)
        wall = time.perf_counter() - t
        result = outcome.result or {}
        if not outcome.ok or not result.get("ok"):
            print(f"failed: {outcome.message} {result.get('error')}")
            return
        shown = views_shown_seconds(str(src), result)
    s = result["seconds"]
    print(f"nodes: {result['nodes_before']} -> {result['nodes_after']}")
    print(f"click to result: {wall:.1f} s (worker start + torch import: {wall - sum(s.values()):.1f} s, "
          f"load {s['load']:.1f} s, decompose {s['decompose']:.1f} s, map {s['map']:.2f} s, save {s['save']:.1f} s)")
    print(f"then both views shown (read, index, lay out, draw) in {shown:.2f} s; click to both views: "
          f"{wall + shown:.1f} s")


def views_shown_seconds(original: str, result: dict) -> float:
    """After the job: seconds until both graphs of the comparison are laid out and on screen (offscreen Qt, in a
    fresh process, the way the window does it: read the decomposed archive, build both views, lay them out)."""
    import json
    import os
    import subprocess

    code = f"""
import json, os, sys, time
sys.path.insert(0, {str(REPO)!r})
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtWidgets import QApplication
from pathlib import Path
from pt2_viewer.app.compare.view import CompareView, plan_decomposition
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.compare.decomposition import Decomposition
from pt2_viewer.core.jobs.schemas.decompose import DecomposeResult
from pt2_viewer.core.pt2.reader import read_archive
app = QApplication([])
w = MainWindow(interactive=False); w.resize(1400, 900); w.show()
result = json.loads({json.dumps(json.dumps(result))})
out = {{}}
def opened(doc):
    t = time.perf_counter()
    decomposition = Decomposition.from_decompose(DecomposeResult.from_json(result), Path(result["output"]).parent)
    plan = plan_decomposition(doc.model.archive, doc.model.program, decomposition, read_archive(result["output"]))
    view = CompareView.from_plan(plan, w.layouts, interactive=False)
    view.ready.connect(lambda: (out.__setitem__("s", time.perf_counter() - t), app.quit()))
    w.show_compare(view)
w.document_ready.connect(opened)
w.open_path({original!r})
app.exec()
w.layouts.close()
print(out.get("s", -1))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    try:
        return float(run.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print(run.stderr[-2000:])
        return -1.0


if __name__ == "__main__":
    main()
