"""Build big real programs for benchmarks and scale tests: a deep transformer-like model exported with torch.export
and decomposed to core ATen, saved as `.pt2`. 135 layers give 9,871 nodes (13: 965, 54: 3,958). No downloads.

`program_path(layers)` caches the archive under `.cache/big-programs/<torch version>/` so runs after the first are
fast. Importing this module does not import torch; building does.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "big-programs"


def _model(layers: int, d: int, heads: int):  # type: ignore[no-untyped-def]
    import torch

    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(d)
            self.q, self.k, self.v = (torch.nn.Linear(d, d) for _ in range(3))
            self.o = torch.nn.Linear(d, d)
            self.ln2 = torch.nn.LayerNorm(d)
            self.up = torch.nn.Linear(d, 2 * d)
            self.down = torch.nn.Linear(2 * d, d)

        def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            b, t, _ = x.shape
            h = self.ln1(x)
            q, k, v = (m(h).view(b, t, heads, d // heads).transpose(1, 2) for m in (self.q, self.k, self.v))
            att = (q @ k.transpose(-1, -2)) * (d // heads) ** -0.5 + mask
            y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.o(y)
            return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))

    class Deep(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = torch.nn.ModuleList(Layer() for _ in range(layers))
            self.norm = torch.nn.LayerNorm(d)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            t = x.shape[1]
            mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)  # a hub: feeds every layer
            for layer in self.layers:
                x = layer(x, mask)
            return self.norm(x)

    return Deep().eval()


def program_path(layers: int = 100, d: int = 16, heads: int = 2, dynamic: bool = True, weights_mb: float = 0,
                 decompose: bool = True, cache: Path = CACHE) -> Path:
    """The cached `.pt2` of a `layers`-deep model: core ATen after run_decompositions, or the training IR export
    gives with `decompose=False`. `weights_mb` pads the archive with an extra parameter of that size (to show reading
    time does not depend on weight size). `cache`: the folder (the tests keep theirs per user,
    tests/big_programs.py)."""
    import torch

    from pt2_viewer.core.util.files import save_program

    ir = "" if decompose else "_training"
    name = f"deep{layers}_d{d}_h{heads}_{'dyn' if dynamic else 'static'}_w{weights_mb:g}{ir}.pt2"
    path = cache / torch.__version__ / name
    if path.exists():
        return path
    torch.manual_seed(0)
    model = _model(layers, d, heads)
    if weights_mb:
        model.register_parameter("padding", torch.nn.Parameter(torch.zeros(int(weights_mb * 1024 * 1024 / 4))))
    x = torch.randn(2, 8, d)
    shapes = {"x": {1: torch.export.Dim("seq", min=2, max=4096)}} if dynamic else None
    ep = torch.export.export(model, (x,), dynamic_shapes=shapes)
    return save_program(ep.run_decompositions() if decompose else ep, path)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    t = time.perf_counter()
    p = program_path(n)
    print(f"{p} ({p.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s")
