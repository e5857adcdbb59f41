"""`reshape(4, -1)` specializes the batch dim the spec marks dynamic."""
import torch
from torch.export import Dim


class Flat(torch.nn.Module):
    def forward(self, x):
        return x.reshape(4, -1).sum(1)


batch = Dim("batch")
shapes = {"x": (batch, Dim.STATIC)}
ep = torch.export.export(Flat(), (torch.randn(4, 6),), dynamic_shapes=shapes)
print(ep)
