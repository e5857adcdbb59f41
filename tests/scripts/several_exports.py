"""Several torch.export.export calls in one script: ok, caught failures of each kind, dynamic shapes, cond, map."""
import torch
from torch.export import Dim, export


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return torch.relu(self.lin(x + y))


ep = export(Small(), (torch.randn(2, 4), torch.randn(2, 4)))
print("exported Small", len(ep.graph.nodes))


class DataBranch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # graph break in strict mode
            return torch.sin(x)
        return torch.cos(x)


try:
    export(DataBranch(), (torch.randn(3),), strict=True)
except Exception as e:
    print("caught", type(e).__name__)


class ItemBranch(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()
        if a // 2 >= 5:  # data-dependent guard
            return y + 2
        return y * 5


try:
    export(ItemBranch(), (torch.tensor(32), torch.randn(4)), strict=True)
except Exception as e:
    print("caught", type(e).__name__)


class IntCast(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()
        b = torch.cat([y for _ in range(a)], dim=0)  # specialized value
        return b + int(a)


try:
    export(IntCast(), (torch.tensor(3), torch.randn(5)), strict=False)
except Exception as e:
    print("caught", type(e).__name__)


class Broadcast(torch.nn.Module):
    def forward(self, x, y):
        w = x + y
        return w + torch.ones(4)


dx, dy, d1 = torch.export.dims("dx", "dy", "d1")
try:
    export(Broadcast(), (torch.randn(6, 4), torch.randn(6, 4)), dynamic_shapes={"x": (dx, d1), "y": (dy, d1)})
except Exception as e:
    print("caught", type(e).__name__)


class Shapes(torch.nn.Module):
    def forward(self, x, y):
        x0 = x + y
        return x0.flatten()


dyn = export(Shapes(), (torch.randn(4), torch.randn(8, 4)), dynamic_shapes={"x": (Dim.AUTO,), "y": (Dim.AUTO, Dim.AUTO)})
print("dynamic", dyn.range_constraints)


class Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: torch.sin(x), lambda x: torch.cos(x), [x])


export(Cond(), (torch.randn(3),))

from torch._higher_order_ops.map import map as torch_map


class MapModule(torch.nn.Module):
    def forward(self, xs, y):
        def body(x, y):
            return x + y

        return torch_map(body, xs, y)


export(MapModule(), (torch.ones(3, 2), torch.tensor(5.0)))

SCALE = 3.0


def scale(x):
    return x * SCALE


class UsesGlobals(torch.nn.Module):
    def forward(self, x):
        return scale(x.sin())  # strict mode looks this module up by name


export(UsesGlobals(), (torch.randn(3),), strict=True)
print("all done")
