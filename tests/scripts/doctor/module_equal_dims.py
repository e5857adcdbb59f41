"""Module-level convention: two batch dims the model forces equal (a + b), declared as two different Dims."""
import torch
from torch.export import Dim


class Add(torch.nn.Module):
    def forward(self, a, b):
        return a + b


batch_a = Dim("batch_a")
batch_b = Dim("batch_b")
model = Add()
example_args = (torch.randn(4, 3), torch.randn(4, 3))
dynamic_shapes = {"a": {0: batch_a}, "b": {0: batch_b}}
