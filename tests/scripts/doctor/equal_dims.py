"""Two batch dims the model forces equal (x + y), declared as two different Dims."""
import torch
from torch.export import Dim


class Add(torch.nn.Module):
    def forward(self, a, b):
        return a + b


batch_a = Dim("batch_a")
batch_b = Dim("batch_b")
ep = torch.export.export(Add(), (torch.randn(4, 3), torch.randn(4, 3)),
                         dynamic_shapes={"a": {0: batch_a}, "b": {0: batch_b}})
print(ep)
