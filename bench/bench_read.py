"""How fast our reader opens a big `.pt2`, against `torch.export.load` on the same file, in the same run.

Why: the viewer promises that a 10,000-node program opens at once, without torch, and that weights never slow it
down (it reads only the JSON members). This bench builds the evidence on the spot, with no downloads:

  1. a deep transformer-like model (about 10,000 nodes after `run_decompositions`) with ~1 MB of weights;
  2. the same graph with ~1 GB of weights (wider layers, identical node count).

It prints the time to read each with `core.reader.read_archive` (+ `archive_info`), the time `torch.export.load`
takes, and the ratio (target: at least 20x). It asserts nothing about time: machines differ. Archives are cached under
`.cache/bench/<torch version>/<hash of the model's source>/` so a rerun skips the export.

Run: `.venv/bin/python bench/bench_read.py [--layers 140] [--repeat 3] [--torch-repeat 1] [--skip-large]`
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import inspect
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from core.info import archive_info  # noqa: E402
from core.reader import read_archive  # noqa: E402

HEADS = 4
SMALL_WIDTH = 12  # ~1 MB of float32 weights at 140 layers (12 * width^2 * layers floats)
LARGE_WIDTH = 384  # ~1 GB at 140 layers


@dataclass
class Variant:
    label: str
    width: int
    layers: int


@dataclass
class Timing:
    label: str
    nodes: int
    file_mb: float
    ours_s: float
    ours_cold_s: float
    torch_s: float

    @property
    def ratio(self) -> float:
        return self.torch_s / self.ours_s if self.ours_s else float("inf")


def build_program(width: int, layers: int):  # -> torch.export.ExportedProgram
    """A GPT-like stack of pre-norm blocks (attention + MLP), exported and decomposed to core ATen."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b, t, d = x.shape
            q, k, v = (z.view(b, t, HEADS, d // HEADS).transpose(1, 2) for z in self.qkv(self.ln1(x)).split(d, -1))
            scores = (q @ k.transpose(-2, -1)) * (d // HEADS) ** -0.5
            causal = torch.ones(t, t, dtype=torch.bool).triu(1)
            attn = scores.masked_fill(causal, float("-inf")).softmax(-1)
            x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(width)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for block in self.blocks:
                x = block(x)
            return self.ln(x)

    with torch.no_grad():
        model = Model().eval()
    ep = torch.export.export(model, (torch.randn(2, 8, width),))
    return ep.run_decompositions()


def cache_dir() -> Path:
    """Keyed by torch's version and the model's source, so editing the printing code keeps the (slow) exports."""
    import torch

    source_hash = hashlib.sha256(inspect.getsource(build_program).encode()).hexdigest()[:12]
    return REPO_ROOT / ".cache" / "bench" / torch.__version__ / source_hash


def archive_for(variant: Variant) -> Path:
    """The variant's `.pt2`, exported and saved (atomically) on first use."""
    import torch

    path = cache_dir() / f"{variant.label}-w{variant.width}-l{variant.layers}.pt2"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"exporting {variant.label} (width {variant.width}, {variant.layers} layers) ...", flush=True)
    started = time.perf_counter()
    ep = build_program(variant.width, variant.layers)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".build-") as tmp:
        tmp_path = Path(tmp) / path.name  # the archive's root folder is named after the file stem
        torch.export.save(ep, tmp_path)
        os.replace(tmp_path, path)
    del ep
    gc.collect()
    print(f"  done in {time.perf_counter() - started:.0f} s", flush=True)
    return path


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def read_ours(path: Path) -> int:
    archive = read_archive(path)
    archive_info(archive)
    return archive.programs[0].node_count


def read_ours_cold(path: Path) -> float:
    """Wall time of a fresh interpreter that imports the reader and reads the file: what a user waits for."""
    script = "import sys; from core.reader import read_archive; read_archive(sys.argv[1])"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", script, str(path)], cwd=REPO_ROOT, check=True)
    return time.perf_counter() - started


def read_torch(path: Path) -> None:
    import torch

    ep = torch.export.load(path)
    del ep


def measure(variant: Variant, repeat: int, torch_repeat: int) -> Timing:
    path = archive_for(variant)
    nodes = read_ours(path)
    ours = best_of(repeat, lambda: read_ours(path))
    cold = min(read_ours_cold(path) for _ in range(repeat))
    theirs = best_of(torch_repeat, lambda: read_torch(path))
    return Timing(variant.label, nodes, path.stat().st_size / 1e6, ours, cold, theirs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=140, help="transformer blocks (~71 nodes each)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many reads with our reader")
    parser.add_argument("--torch-repeat", type=int, default=1, help="best of this many torch.export.load calls (slow)")
    parser.add_argument("--skip-large", action="store_true", help="skip the ~1 GB-weights variant")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))
    variants = [Variant("weights-1MB", SMALL_WIDTH, args.layers)]
    if not args.skip_large:
        variants.append(Variant("weights-1GB", LARGE_WIDTH, args.layers))

    # Warm both loaders (imports, first-call caches) on a one-block program before timing anything.
    warm = archive_for(Variant("warm-up", SMALL_WIDTH, 1))
    read_ours(warm)
    read_torch(warm)

    timings = [measure(v, args.repeat, args.torch_repeat) for v in variants]
    print(f"\ntorch {torch.__version__}, python {sys.version.split()[0]}, best of {args.repeat} (ours) and "
          f"{args.torch_repeat} (torch)")
    print(f"{'archive':<14} {'nodes':>7} {'file MB':>9} {'ours s':>8} {'ours cold s':>12} {'torch s':>9} {'ratio':>7}")
    for t in timings:
        print(f"{t.label:<14} {t.nodes:>7} {t.file_mb:>9.1f} {t.ours_s:>8.3f} {t.ours_cold_s:>12.3f} "
              f"{t.torch_s:>9.2f} {t.ratio:>6.0f}x")
    print("ratio = torch.export.load / read_archive+archive_info (target >= 20x); 'ours cold' = new process, "
          "imports included")
    if len(timings) == 2:
        small, large = timings
        print(f"weights x{large.file_mb / small.file_mb:.0f}: our read time x{large.ours_s / small.ours_s:.2f}, "
              f"torch's x{large.torch_s / small.torch_s:.2f} (ours should stay ~x1: it reads only JSON)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
