"""A model calling a custom op defined in the user's other file (my_ops.py)."""
import torch

from my_ops import double


class Twice(torch.nn.Module):
    def forward(self, x):
        return double(x) - 1


ep = torch.export.export(Twice(), (torch.randn(3),))
print(ep)
