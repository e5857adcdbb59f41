"""Module-level convention, the tutorial's constraint violation: x + y needs dx == dy, `+ torch.ones(4)` pins d1."""
import torch


class Foo(torch.nn.Module):
    def forward(self, x, y):
        w = x + y
        return w + torch.ones(4)


dx, dy, d1 = torch.export.dims("dx", "dy", "d1")
model = Foo()
example_args = (torch.randn(6, 4), torch.randn(6, 4))
dynamic_shapes = {
    "x": (dx, d1),
    "y": (dy, d1),
}
