"""The model's own `if` narrows the dynamic length."""
import torch
from torch.export import Dim


class Window(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 4:
            return x[:4]
        return x


n = Dim("n", max=64)
ep = torch.export.export(Window(), (torch.randn(8, 2),), dynamic_shapes=({0: n},))
print(ep)
