"""How fast our reader opens a big `.pt2`, against `torch.export.load` on the same file, in the same run.

Why: the viewer promises that a 10,000-node program opens at once, without torch, and that weights never slow it
down (it reads only the JSON members). This bench builds the evidence on the spot, with no downloads, using the
shared deep transformer-like model of `bench/big_model.py` (core ATen after `run_decompositions`, ~10,000 nodes at
135 layers):

  1. that program with its own small weights (under 1 MB);
  2. the same program padded with ~1 GB of weights (one extra parameter, so one more input node).

It prints the time to read each with `pt2_viewer.core.pt2.reader.read_archive` (+ `archive_info`), the time
`torch.export.load` takes, and the ratio (target: at least 20x). It asserts nothing about time: machines differ. The
archives are cached by `big_model.program_path` under `.cache/big-programs/`.

Run: `.venv/bin/python bench/bench_read.py [--layers 135] [--repeat 3] [--torch-repeat 1] [--skip-large]`
"""
from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench import big_model  # noqa: E402
from pt2_viewer.core.pt2.info import archive_info  # noqa: E402
from pt2_viewer.core.pt2.reader import read_archive  # noqa: E402

LARGE_WEIGHTS_MB = 1024


@dataclass
class Timing:
    label: str
    nodes: int
    file_mb: float
    weights_mb: float
    ours_s: float
    ours_cold_s: float
    torch_s: float

    @property
    def ratio(self) -> float:
        return self.torch_s / self.ours_s if self.ours_s else float("inf")


def archive_for(label: str, layers: int, weights_mb: float) -> Path:
    started = time.perf_counter()
    path = big_model.program_path(layers, weights_mb=weights_mb)
    elapsed = time.perf_counter() - started
    if elapsed > 1:
        print(f"built {label} ({layers} layers) in {elapsed:.0f} s: {path}", flush=True)
    return path


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def read_ours(path: Path) -> tuple[int, int]:
    """Read as the viewer does; (node count, weight bytes the manifest declares)."""
    archive = read_archive(path)
    archive_info(archive)
    return archive.programs[0].node_count, archive.programs[0].weight_bytes


def read_ours_cold(path: Path) -> float:
    """Wall time of a fresh interpreter that imports the reader and reads the file: what a user waits for."""
    script = "import sys; from pt2_viewer.core.pt2.reader import read_archive; read_archive(sys.argv[1])"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", script, str(path)], cwd=REPO_ROOT, check=True)
    return time.perf_counter() - started


def read_torch(path: Path) -> None:
    import torch

    ep = torch.export.load(path)
    del ep


def measure(label: str, path: Path, repeat: int, torch_repeat: int) -> Timing:
    nodes, weight_bytes = read_ours(path)
    ours = best_of(repeat, lambda: read_ours(path))
    cold = min(read_ours_cold(path) for _ in range(repeat))
    theirs = best_of(torch_repeat, lambda: read_torch(path))
    return Timing(label, nodes, path.stat().st_size / 1e6, weight_bytes / 1e6, ours, cold, theirs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=135, help="transformer blocks (~73 nodes each)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many reads with our reader")
    parser.add_argument("--torch-repeat", type=int, default=1, help="best of this many torch.export.load calls (slow)")
    parser.add_argument("--skip-large", action="store_true", help="skip the ~1 GB-weights variant")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))
    archives = {"small weights": archive_for("small weights", args.layers, 0)}
    if not args.skip_large:
        archives["weights +1 GB"] = archive_for("weights +1 GB", args.layers, LARGE_WEIGHTS_MB)

    # Warm both loaders (imports, first-call caches) on a one-layer program before timing anything.
    warm = archive_for("warm-up", 1, 0)
    read_ours(warm)
    read_torch(warm)

    timings = [measure(label, path, args.repeat, args.torch_repeat) for label, path in archives.items()]
    print(f"\ntorch {torch.__version__}, python {sys.version.split()[0]}, best of {args.repeat} (ours) and "
          f"{args.torch_repeat} (torch)")
    print(f"{'archive':<14} {'nodes':>7} {'file MB':>9} {'weights MB':>11} {'ours s':>8} {'ours cold s':>12} "
          f"{'torch s':>9} {'ratio':>7}")
    for t in timings:
        print(f"{t.label:<14} {t.nodes:>7} {t.file_mb:>9.1f} {t.weights_mb:>11.1f} {t.ours_s:>8.3f} "
              f"{t.ours_cold_s:>12.3f} {t.torch_s:>9.2f} {t.ratio:>6.0f}x")
    print("ratio = torch.export.load / read_archive+archive_info (target >= 20x); 'ours cold' = new process, "
          "imports included")
    if len(timings) == 2:
        small, large = timings
        print(f"weights x{large.weights_mb / small.weights_mb:.0f}: our read time x{large.ours_s / small.ours_s:.2f}, "
              f"torch's x{large.torch_s / small.torch_s:.2f} (ours should stay ~x1: it reads only JSON)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
