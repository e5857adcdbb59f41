"""The dynamic_shapes spec is built by code, not written out."""
import torch
from torch.export import Dim


class Add(torch.nn.Module):
    def forward(self, a, b):
        return a + b


names = ["a", "b"]
shapes = {name: {0: Dim(f"batch_{name}")} for name in names}
ep = torch.export.export(Add(), (torch.randn(4, 3), torch.randn(4, 3)), dynamic_shapes=shapes)
print(ep)
