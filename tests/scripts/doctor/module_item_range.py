"""Module-level convention, the tutorial's specialized value: `range(a)` needs a Python int from `x.item()`."""
import torch


class Foo(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()
        b = torch.cat([y for y in range(a)], dim=0)
        return b + int(a)


model = Foo()
example_args = (torch.tensor(32), torch.randn(60))
strict = False
