"""A threshold read with `.item()` decides the branch."""
import torch


class Clip(torch.nn.Module):
    def forward(self, limit, x):
        m = limit.item()
        if m > 10:
            return x.clamp(max=m)
        return x


ep = torch.export.export(Clip(), (torch.tensor(20), torch.randn(4)))
print(ep)
