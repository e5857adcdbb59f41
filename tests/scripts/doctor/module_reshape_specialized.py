"""Module-level convention: `reshape(4, -1)` specializes the batch dim the spec marks dynamic."""
import torch
from torch.export import Dim


class Flat(torch.nn.Module):
    def forward(self, x):
        return x.reshape(4, -1).sum(1)


model = Flat()
example_args = (torch.randn(4, 6),)
dynamic_shapes = {"x": (Dim("batch"), Dim.STATIC)}
