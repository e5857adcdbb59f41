"""How long `pt2-viewer diff` takes on two ~10,000-node programs, in the viewer's own Python (no torch).

Builds (or takes from bench/big_model.py's cache) the 135-layer program (~9,900 nodes, core ATen) and a 136-layer
one: one more layer near nothing else, so every node name after it shifts, which is what the structural matcher is
for. Prints the node counts, the time to read both archives, the time to diff them (best of `--repeat`), what the
diff found, and the whole command's time in a fresh interpreter. Asserts nothing about time (bench/README.md).

    .venv/bin/python bench/bench_diff.py [--layers 135] [--repeat 3]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import big_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=135)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    a_path = big_model.program_path(args.layers)
    b_path = big_model.program_path(args.layers + 1)

    from pt2_viewer.core.diff.output import summary_line
    from pt2_viewer.core.diff.program_diff import diff_programs
    from pt2_viewer.core.pt2.reader import read_archive

    t = time.perf_counter()
    a, b = read_archive(a_path).program(), read_archive(b_path).program()
    read_s = time.perf_counter() - t
    best = float("inf")
    for _ in range(args.repeat):
        t = time.perf_counter()
        diff = diff_programs(a, b)
        best = min(best, time.perf_counter() - t)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pt2_viewer", "diff", str(a_path), str(b_path), "--json"],
                   stdout=subprocess.DEVNULL, check=True)
    cold_s = time.perf_counter() - t
    print(f"{'A nodes':>8} {'B nodes':>8} {'read s':>7} {'diff s':>7} {'command s':>10}  found")
    print(f"{a.node_count:>8} {b.node_count:>8} {read_s:>7.2f} {best:>7.2f} {cold_s:>10.2f}  {summary_line(diff)}")


if __name__ == "__main__":
    main()
