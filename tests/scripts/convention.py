"""The module-level convention: the worker exports `model` with `example_args` itself (no export call here)."""
import torch
from torch.export import Dim


class TwoInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.lin(x + y)


model = TwoInputs()
example_args = (torch.randn(6, 4), torch.randn(6, 4))
dx, dy = torch.export.dims("dx", "dy")
dynamic_shapes = {"x": (dx, Dim.STATIC), "y": (dy, Dim.STATIC)}  # x + y needs dx == dy: a constraint violation
strict = False
