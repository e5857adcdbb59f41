"""A custom operator with a fake kernel, exported through the convention with an automatic dynamic batch."""
import torch
from torch.export import Dim


@torch.library.custom_op("pt2v_test::scaled_relu", mutates_args=())
def scaled_relu(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.relu(x) * scale


@scaled_relu.register_fake
def _(x, scale):
    return torch.empty_like(x)


class UsesCustomOp(torch.nn.Module):
    def forward(self, x):
        return torch.ops.pt2v_test.scaled_relu(torch.sin(x), 2.0)


model = UsesCustomOp()
example_args = (torch.randn(5, 3),)
dynamic_shapes = {"x": (Dim.AUTO, Dim.STATIC)}
