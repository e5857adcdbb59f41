"""A model script in PT2 Viewer's convention: define `model`, `example_args` and (optionally) `example_kwargs`,
`dynamic_shapes` and `strict` at module level, and the app exports it for you in its worker.

Open it with `pt2-viewer resources/examples/convention.py`, or headless: `pt2-viewer export
resources/examples/convention.py -o out/`. Change the dynamic shapes in the window's export controls and re-export.
"""
import torch
from torch.export import Dim


class MLP(torch.nn.Module):
    def __init__(self, d: int = 16) -> None:
        super().__init__()
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))) * scale)


model = MLP()
example_args = (torch.randn(4, 10, 16),)
example_kwargs = {"scale": 0.5}
dynamic_shapes = {"x": {0: Dim("batch", min=1, max=256), 1: Dim.AUTO}, "scale": None}
strict = False
