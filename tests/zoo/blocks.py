"""Plain `torch.nn` blocks users export as they are: `nn.Transformer`, a stacked `nn.LSTM` and a small U-Net."""
from __future__ import annotations

import torch
from torch import nn
from torch.export import Dim

from tests.zoo.entry import Recipe, ZooEntry


def transformer() -> Recipe:
    model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=64,
                           batch_first=True)
    src, tgt = torch.randn(2, 16, 32), torch.randn(2, 8, 32)
    mask = nn.Transformer.generate_square_subsequent_mask(8)
    return Recipe(model.eval(), (src, tgt), {"tgt_mask": mask, "tgt_is_causal": True})


class LSTMTagger(nn.Module):
    """Two stacked LSTM layers over a sequence, then a linear head per step."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out)


def lstm() -> Recipe:
    """Unbounded batch (export specializes the sequence length of `aten.lstm`)."""
    return Recipe(LSTMTagger().eval(), (torch.randn(2, 16, 16),), dynamic_shapes=({0: Dim("batch")},))


def _conv_block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())


class UNet(nn.Module):
    """Three levels down, three up, skip connections by concatenation."""

    def __init__(self, channels: tuple[int, ...] = (8, 16, 32, 64)) -> None:
        super().__init__()
        self.down = nn.ModuleList()
        cin = 3
        for c in channels:
            self.down.append(_conv_block(cin, c))
            cin = c
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        for c in reversed(channels[:-1]):
            self.up.append(nn.ConvTranspose2d(cin, c, 2, stride=2))
            self.merge.append(_conv_block(2 * c, c))
            cin = c
        self.head = nn.Conv2d(cin, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for i, block in enumerate(self.down):
            x = block(x)
            if i < len(self.down) - 1:
                skips.append(x)
                x = self.pool(x)
        for up, merge in zip(self.up, self.merge):
            x = merge(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


def unet() -> Recipe:
    """Unbounded batch; height and width any multiple of 8."""
    h, w = Dim("h8"), Dim("w8")
    return Recipe(UNet().eval(), (torch.randn(2, 3, 64, 64),),
                  dynamic_shapes=({0: Dim("batch"), 2: 8 * h, 3: 8 * w},))


ENTRIES = [
    ZooEntry("nn_transformer", "nn", transformer, "encoder-decoder, causal mask kwarg"),
    ZooEntry("nn_lstm", "nn", lstm, "unbounded batch"),
    ZooEntry("unet", "nn", unet, "unbounded batch, H and W multiples of 8"),
]
