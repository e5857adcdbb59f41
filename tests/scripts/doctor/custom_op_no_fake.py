"""A custom op defined without a fake kernel."""
import torch


@torch.library.custom_op("doctor::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 3


class UsesOp(torch.nn.Module):
    def forward(self, x):
        return scale(x) + 1


ep = torch.export.export(UsesOp(), (torch.randn(2, 3),))
print(ep)
