"""The number of steps comes from the data: `.item()` used as a Python int."""
import torch


class Halve(torch.nn.Module):
    def forward(self, n, x):
        steps = n.item()
        for _ in range(steps):
            x = x * 0.5
        return x


ep = torch.export.export(Halve(), (torch.tensor(3), torch.randn(4)))
print(ep)
