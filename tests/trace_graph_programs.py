"""torch.compile traces whose graphs the graph tests open (issue 40 §2, "a compiled graph reads like its .pt2"):

- `zoo_trace()`: the zoo's CNN (`mobilenet_v3_small`, trained one step: forward, joint and backward graphs) and
  transformer (`nn_transformer`, under `no_grad`: an inference graph) compiled with `aot_eager`, so every graph
  AOTAutograd makes is logged without Inductor's compile time; their exported programs are the zoo's own
  (tests/zoo/cache.py), built from the same recipes; then a `torch.cond` (its branches: subgraphs);
- `big_graph_trace(layers)`: a generated stack of Linear+ReLU layers compiled with `backend='eager'`, Dynamo's graph
  about `5 * layers` nodes (two weights, a linear, a relu and an add each: ~10k nodes at 2,000), for
  bench/bench_trace_graph.py.

Built once per torch version and script, beside the other trace fixtures (tests/trace_programs.py's runner).
"""
from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

from tests.programs import cache_dir, cached_file
from tests.trace_programs import _run, script_path

REPO = Path(__file__).resolve().parent.parent
ZOO_SOURCES = ("tests/zoo/vision.py", "tests/zoo/blocks.py", "tests/zoo/entry.py", "tests/zoo/torchvision_shim.py")

ZOO_SCRIPT = '''\
import sys

sys.path.insert(0, {repo!r})
import torch

from tests.zoo.blocks import transformer
from tests.zoo.vision import mobilenet_v3_small

torch.manual_seed(0)
cnn = mobilenet_v3_small()
torch.compile(cnn.model, backend="aot_eager")(*cnn.args).sum().backward()
nlp = transformer()
with torch.no_grad():
    torch.compile(nlp.model, backend="aot_eager")(*nlp.args, **nlp.kwargs)


def branches(x):
    return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))


torch.compile(branches, backend="aot_eager")(torch.ones(3))
'''

BIG_SCRIPT = '''\
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x)) + x
        return x


torch.manual_seed(0)
with torch.no_grad():
    torch.compile(Stack({layers}), backend="eager")(torch.randn(2, 8))
'''


def _zoo_key() -> str:
    digest = hashlib.sha256()
    for name in ZOO_SOURCES:
        digest.update((REPO / name).read_bytes())
    return digest.hexdigest()[:12]


def _traced(builder: object, name: str, source: str, *extra: str) -> Path:
    folder = cache_dir(builder, source, *extra)  # type: ignore[arg-type]
    script = script_path(name.replace("_trace", "_script"), source, folder)

    def runs(trace_dir: Path) -> None:
        with tempfile.TemporaryDirectory() as cache:
            _run([sys.executable, str(script)], trace_dir, Path(cache), script.parent)

    return cached_file(folder / name, runs)


def zoo_trace() -> Path:
    """The TORCH_TRACE folder of ZOO_SCRIPT: the zoo's mobilenet_v3_small (with backward) and nn_transformer."""
    return _traced(zoo_trace, "zoo_trace", ZOO_SCRIPT.format(repo=str(REPO)), _zoo_key())


def big_graph_trace(layers: int = 2000) -> Path:
    """The TORCH_TRACE folder of BIG_SCRIPT: one Dynamo graph of about `5 * layers` nodes."""
    return _traced(big_graph_trace, f"big_graph_trace_{layers}", BIG_SCRIPT.format(layers=layers))


def prebuild_fixtures() -> None:
    """`make fixtures`: the traces the graph tests read."""
    zoo_trace()
