"""A script that exports twice: once static (fine), then with a dynamic batch the model fixes."""
import torch
from torch.export import Dim, export


class Proj(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 3))

    def forward(self, x):
        return x @ self.w


x = torch.randn(2, 3)
static = export(Proj(), (x,))
print(static)
dynamic = export(Proj(), (x,), dynamic_shapes={"x": (Dim.AUTO, Dim.DYNAMIC)})
print(dynamic)
