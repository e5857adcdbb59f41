"""What a user waits for: the whole `pt2-viewer FILE --screenshot OUT.png` process (launch, imports, read, lay out,
paint, write the PNG, exit), cold (empty caches) and on reopen (the caches the cold run left), against the floor
measured in the same round (bench/bench_gui.py's: a fresh process that paints an empty main window and reads the
archive's JSON with the standard library).

    .venv/bin/python bench/bench_screenshot.py [--repeat N] [--against TREE] [LAYERS ...]

LAYERS default 135 (bench/big_model.py: ~10k nodes). `--against TREE`: another checkout (`git worktree add`) runs the
same commands in each round, the two trees taking turns to go first; rows marked "(other)". Prints each round and the
medians of the ratios to the floor; asserts nothing.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_gui import measure_floor, with_bytecode  # noqa: E402


def screenshot_s(tree: Path, path: Path, env: dict[str, str], out: Path) -> float:
    """Wall seconds of one `python -m pt2_viewer PATH --screenshot OUT` process of `tree`; NaN if it failed."""
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "pt2_viewer", str(path), "--screenshot", str(out)], cwd=tree,
                         env={**env, "PYTHONPATH": str(tree)}, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        print(f"  {tree}: exit {run.returncode}: {run.stderr.strip()[-500:]}")
        return float("nan")
    return seconds


def main() -> None:
    args = sys.argv[1:]
    repeat, against = 3, None
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i:i + 2]
    if "--against" in args:
        i = args.index("--against")
        against = Path(args[i + 1]).resolve()
        del args[i:i + 2]
    from bench.big_model import program_path

    trees = [REPO] + ([against] if against is not None else [])
    for layers in [int(a) for a in args] or [135]:
        path = program_path(layers)
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        for tree in trees:
            with_bytecode(env, tree)
        ratios: dict[str, list[float]] = {}
        print(f"{path.name}: whole --screenshot process, seconds (ratio to the floor)")
        for i in range(repeat):
            floor, _cpu = measure_floor(path, env)
            order = trees if i % 2 == 0 else list(reversed(trees))
            row = [f"round {i + 1}: floor {floor:.2f}"]
            for tree in order:
                label = "" if tree == REPO else " (other)"
                with tempfile.TemporaryDirectory() as home:
                    tree_env = {**env, "PT2V_CACHE_DIR": str(Path(home) / "cache")}
                    with_bytecode(tree_env, tree)
                    for kind in ("cold", "reopen"):
                        s = screenshot_s(tree, path, tree_env, Path(home) / f"{kind}.png")
                        ratios.setdefault(kind + label, []).append(s / floor)
                        row.append(f"{kind}{label} {s:.2f} ({s / floor:.2f}x)")
            print("  " + ", ".join(row))
        for key, values in ratios.items():
            print(f"  median {key}: {statistics.median(values):.2f}x the floor ({len(values)} rounds)")


if __name__ == "__main__":
    main()
