"""Module-level convention: the spec allows n down to 1, but the model's own `if` narrows it."""
import torch
from torch.export import Dim


class Window(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 2:
            return x[:2] * 2
        return x


model = Window()
example_args = (torch.randn(8, 3),)
dynamic_shapes = {"x": {0: Dim("n", min=1, max=64)}}
