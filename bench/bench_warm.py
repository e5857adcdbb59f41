"""torch once per program: a decompose from the window against torch doing the same in one process, and how fast a
second job on the same program starts in its warm worker (core/jobs/warm.py). Prints figures; asserts nothing.

Measured in one run, on the training IR of bench/big_model.py's deep model (core ATen decomposition):

- baseline (before and after the rest; their mean): a fresh Python that imports torch (timed apart), then
  `torch.export.load`, `run_decompositions`, `torch.export.save`: what torch itself needs, in one process;
- cold click: the window's path (`WarmPool.job`, as `WorkerDriver(warm=...)` uses it) with no worker yet: start the
  worker, import torch, check and load the archive, decompose, map nodes, save; click to result.json;
- prewarmed click: the Decompose dialog prewarms the worker when it opens (torch imported while the user chooses);
  then the click: check, load, decompose, map, save;
- second job: another decompose of the same program in the same worker: the program is not loaded again. "Starts" is
  click to its `program_loaded` event (the job has its own copy of the loaded program and begins work).

Targets (issue 14): prewarmed click within 1.2x of the baseline; a second job starts in under 1 s.

Usage: `.venv/bin/python bench/bench_warm.py [--layers N]` (default 13 layers: about 540 nodes of training IR; 110 is
the 4.5k-node program of bench_decompose.py, minutes per figure on a 2-core machine).
"""
from __future__ import annotations

import argparse
import json
import selectors
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

BASELINE = """
import json, sys, time
t = time.perf_counter(); import torch; imp = time.perf_counter() - t
t = time.perf_counter(); ep = torch.export.load(sys.argv[1]); load = time.perf_counter() - t
t = time.perf_counter(); d = ep.run_decompositions(torch.export.default_decompositions()); dec = time.perf_counter() - t
t = time.perf_counter(); torch.export.save(d, sys.argv[2]); save = time.perf_counter() - t
print(json.dumps({"import": imp, "load": load, "decompose": dec, "save": save, "nodes": len(d.graph.nodes)}))
"""


def baseline(src: Path, out: Path) -> dict[str, float]:
    run = subprocess.run([sys.executable, "-c", BASELINE, str(src), str(out / "baseline.pt2")], capture_output=True,
                         text=True, timeout=3600)
    return json.loads(run.stdout.strip().splitlines()[-1])


def click(pool, src: Path, out: Path) -> tuple[float, float | None, dict]:  # type: ignore[no-untyped-def]
    """(click to result, click to program_loaded, the job's result)."""
    from pt2_viewer.core.jobs.spec import JobSpec

    loaded: list[float] = []
    t = time.perf_counter()
    job = pool.job(JobSpec("decompose", {"program": str(src), "to": "core"}, out,
                           on_event=lambda e: loaded.append(time.perf_counter() - t)
                           if e["type"] == "program_loaded" else None))
    job.start()
    outcome = job.wait()
    wall = time.perf_counter() - t
    if not outcome.ok or not (outcome.result or {}).get("ok"):
        raise SystemExit(f"the decompose failed: {outcome.message} {(outcome.result or {}).get('error')}")
    return wall, (loaded[0] if loaded else None), outcome.result or {}


def wait_ready(worker, limit_s: float = 600) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    with selectors.DefaultSelector() as sel:
        while not worker.ready and worker.alive and time.perf_counter() - t < limit_s:
            fds = worker.fds()
            for fd in fds:
                sel.register(fd, selectors.EVENT_READ)
            sel.select(timeout=0.1)
            for fd in fds:
                sel.unregister(fd)
            worker.read()
    return time.perf_counter() - t


def main() -> None:
    from bench.big_model import program_path
    from pt2_viewer.core.jobs.warm import WarmPool

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=13)
    args = ap.parse_args()
    t = time.perf_counter()
    src = program_path(args.layers, decompose=False)
    print(f"program: {src.name} (built or found in {time.perf_counter() - t:.1f} s)")
    with tempfile.TemporaryDirectory(prefix="pt2v-bench-warm-") as tmp:
        out = Path(tmp)
        base = baseline(src, out)
        torch_s = base["load"] + base["decompose"] + base["save"]
        print(f"baseline, torch in one process: {torch_s:.2f} s (load {base['load']:.2f}, run_decompositions "
              f"{base['decompose']:.2f}, save {base['save']:.2f}; importing torch before it: {base['import']:.2f} s)")

        cold_pool = WarmPool(idle_timeout_s=300, enabled=True)
        cold, _, result = click(cold_pool, src, out / "cold")
        cold_pool.close()
        print(f"nodes: {result['nodes_before']} -> {result['nodes_after']}")

        pool = WarmPool(idle_timeout_s=300, enabled=True)
        worker = pool.prewarm(str(src))
        assert worker is not None
        ready = wait_ready(worker)
        warm, _, result = click(pool, src, out / "warm")
        s = result["seconds"]
        second, start, _ = click(pool, src, out / "second")
        pool.close()
        again = baseline(src, out)  # the machine's load changes: the baseline again after, and their mean counts
        again_s = again["load"] + again["decompose"] + again["save"]
        print(f"baseline again after the clicks: {again_s:.2f} s; the ratios use the mean of both")
        torch_s = (torch_s + again_s) / 2

    rows = [
        ("cold click (fresh worker) / baseline", cold / torch_s, f"{cold:.2f} s", "(no target: the one-shot path)"),
        ("prewarmed click / baseline", warm / torch_s, f"{warm:.2f} s", "target <= 1.20x"),
        ("second job, click to result / baseline", second / torch_s, f"{second:.2f} s", "(no load: faster than torch)"),
    ]
    print(f"worker prewarmed (torch imported) in {ready:.2f} s while the dialog is open")
    print(f"prewarmed click: check+load {s.get('load', 0):.2f}, decompose {s.get('decompose', 0):.2f}, "
          f"map {s.get('map', 0):.2f}, save {s.get('save', 0):.2f} s")
    for name, ratio, figure, target in rows:
        print(f"{name:42s} {ratio:6.2f}x  ({figure})  {target}")
    verdict = "met" if start is not None and start < 1.0 else "NOT met"
    print(f"{'second job starts (click to program ready)':42s} {start if start is not None else -1:6.2f} s   "
          f"target < 1 s: {verdict}")


if __name__ == "__main__":
    main()
