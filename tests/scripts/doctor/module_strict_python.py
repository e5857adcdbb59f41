"""Module-level convention with strict = True: strict export refuses a Python builtin the model calls (id)."""
import torch


class Tag(torch.nn.Module):
    def forward(self, x):
        x = x + 1
        return x + id(x) % 7


model = Tag()
example_args = (torch.randn(2, 2),)
strict = True
