"""torch.compile traces made by this machine's torch, for the trace reader's tests (issue 40): tiny scripts run in a
subprocess with `TORCH_TRACE=DIR` on CPU, Inductor compiling each graph.

- `compile_trace()`: a small CNN trained one step (a backward pass), a small transformer, a data-dependent branch
  (two shapes: two compiles hit it), a `print` and an `.item()` (graph breaks), shape and dtype changes (recompiles);
- `warm_trace()`: the CNN's script run twice on one Inductor cache: the second run's trace, its graphs cache hits;
- `ranks_trace()`: two ranks under torchrun with gloo, rank 1 calling with a second shape (it recompiles, rank 0
  does not);
- `ranks_breaks_trace()`: two ranks under torchrun with gloo (`aot_eager`), both breaking at one `print`, rank 0
  alone at a data-dependent branch, rank 1 alone recompiling for a dtype.

Each folder is built once per torch version and script (tests/programs.py `cached_file`, `cache_dir`); the scripts
lie beside it (`script_path`), so a test reads the user's own lines from them by their `# line:` markers.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.programs import cache_dir, cached_file

CNN_SCRIPT = '''\
import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(self.conv(x).relu(), 2)
        return self.fc(x.flatten(1))
'''

COMPILE_SCRIPT = CNN_SCRIPT + '''

def branch(x):
    y = x.sin()
    if y.sum() > 0:  # line: branch
        return y.cos()
    return y * 2


def printing(x):
    print("printing")  # line: print
    return x * 3


def scalar(x):
    s = x.sum().item()  # line: item
    return x + s


def shapes(x):  # line: shapes
    return x.relu() + 1


torch.manual_seed(0)
cnn = torch.compile(SmallCNN())
cnn(torch.randn(2, 3, 8, 8)).sum().backward()
layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True).eval()
with torch.no_grad():
    torch.compile(layer)(torch.randn(1, 4, 16))
compiled_branch = torch.compile(branch)
compiled_branch(torch.ones(4))
compiled_branch(torch.ones(5))  # a recompile that breaks at the same line
torch.compile(printing)(torch.ones(4))
torch.compile(scalar)(torch.ones(4))
compiled_shapes = torch.compile(shapes)
compiled_shapes(torch.ones(2))
compiled_shapes(torch.ones(3))
compiled_shapes(torch.ones(3, dtype=torch.float64))
'''

WARM_SCRIPT = CNN_SCRIPT + '''

torch.manual_seed(0)
torch.compile(SmallCNN())(torch.randn(2, 3, 8, 8)).sum().backward()
'''

RANKS_SCRIPT = '''\
import torch
import torch.distributed as dist


def step(x):  # line: step
    return (x * 2).sin()


dist.init_process_group("gloo")
compiled = torch.compile(step)
compiled(torch.ones(4))
if dist.get_rank() == 1:
    compiled(torch.ones(5))
dist.barrier()
dist.destroy_process_group()
'''

# Two ranks that differ as a real job's do: both break at the same `print` (one entry, hit by rank 0's [0/0] and
# rank 1's [1/0]: rank 1 compiled `shapes` first), rank 0 alone meets a data-dependent branch, rank 1 alone calls
# with another dtype (a recompile). `aot_eager`: the
# ranks' story without Inductor's compile time.
RANKS_BREAKS_SCRIPT = '''\
import torch
import torch.distributed as dist


def step(x):
    y = x.sin()
    print("step")  # line: print
    return y * 2


def branch(x):
    if x.sum() > 0:  # line: branch
        return x.cos()
    return x


def shapes(x):  # line: shapes
    return x.relu() + 1


dist.init_process_group("gloo")
rank = dist.get_rank()
compiled_shapes = torch.compile(shapes, backend="aot_eager")
if rank == 1:
    compiled_shapes(torch.ones(3))  # first: rank 1 numbers its frames apart from rank 0
torch.compile(step, backend="aot_eager")(torch.ones(4))
if rank == 0:
    compiled_shapes(torch.ones(3))
    torch.compile(branch, backend="aot_eager")(torch.ones(4))
else:
    compiled_shapes(torch.ones(3, dtype=torch.float64))
dist.barrier()
dist.destroy_process_group()
'''


def script_path(name: str, source: str, folder: Path) -> Path:
    """The script, written once where its trace's folder is (its lines are the user's lines the trace names)."""
    path = folder / f"{name}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != source:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(source, encoding="utf-8")
        os.replace(tmp, path)
    return path


def marked_line(script: Path, marker: str) -> int:
    """The line of `script` that ends in `# line: MARKER`."""
    for number, text in enumerate(script.read_text(encoding="utf-8").splitlines(), start=1):
        if text.rstrip().endswith(f"# line: {marker}"):
            return number
    raise LookupError(f"{script}: no line marked {marker}")


def _run(command: list[str], trace_dir: Path, inductor_cache: Path, cwd: Path) -> None:
    env = {**os.environ, "TORCH_TRACE": str(trace_dir), "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache),
           "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    # its own process group, so a timeout ends torchrun's workers too
    child = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        _, err = child.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise
    if child.returncode != 0:
        raise RuntimeError(f"{command[-1]} failed: {err.strip().splitlines()[-1:]}")


def _trace(builder: object, name: str, source: str, runs: Callable[[Path, Path], None]) -> Path:
    """The trace folder `name`, built by `runs(script, trace_dir)` once per torch version and script."""
    folder = cache_dir(builder, source)  # type: ignore[arg-type]
    script = script_path(name.replace("_trace", "_script"), source, folder)
    return cached_file(folder / name, lambda tmp: runs(script, tmp))


def compile_trace() -> Path:
    """The TORCH_TRACE folder of COMPILE_SCRIPT, run with a cold Inductor cache."""

    def runs(script: Path, trace_dir: Path) -> None:
        with tempfile.TemporaryDirectory() as cache:
            _run([sys.executable, str(script)], trace_dir, Path(cache), script.parent)

    return _trace(compile_trace, "compile_trace", COMPILE_SCRIPT, runs)


def warm_trace() -> Path:
    """The TORCH_TRACE folder of WARM_SCRIPT's second run on the first run's Inductor cache (its cache hits)."""

    def runs(script: Path, trace_dir: Path) -> None:
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cold:
            _run([sys.executable, str(script)], Path(cold), Path(cache), script.parent)
            _run([sys.executable, str(script)], trace_dir, Path(cache), script.parent)

    return _trace(warm_trace, "warm_trace", WARM_SCRIPT, runs)


def _torchrun(script: Path, trace_dir: Path) -> None:
    """`script` run by two ranks under `torchrun --standalone --nproc_per_node 2`."""
    with tempfile.TemporaryDirectory() as cache:
        _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script)],
             trace_dir, Path(cache), script.parent)


def ranks_trace() -> Path:
    """The TORCH_TRACE folder of RANKS_SCRIPT under torchrun: one log per rank."""
    return _trace(ranks_trace, "ranks_trace", RANKS_SCRIPT, _torchrun)


def ranks_breaks_trace() -> Path:
    """The TORCH_TRACE folder of RANKS_BREAKS_SCRIPT under torchrun: one log per rank."""
    return _trace(ranks_breaks_trace, "ranks_breaks_trace", RANKS_BREAKS_SCRIPT, _torchrun)


def prebuild_fixtures() -> None:
    """`make fixtures`: every trace the tests read."""
    compile_trace()
    warm_trace()
    ranks_trace()
    ranks_breaks_trace()
