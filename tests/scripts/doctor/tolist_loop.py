"""Indices read with `.tolist()` and checked against the table in a loop."""
import torch


class Gather(torch.nn.Module):
    def forward(self, idx, table):
        rows = []
        for i in idx.tolist():
            if i < table.shape[0]:
                rows.append(table[i])
        return torch.stack(rows)


ep = torch.export.export(Gather(), (torch.tensor([0, 2]), torch.randn(5, 3)))
print(ep)
