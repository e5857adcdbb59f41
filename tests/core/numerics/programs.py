"""Small real programs with a known place where their numbers go wrong, exported by torch once per session."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch


class Overflow(torch.nn.Module):
    """linear, then x * 300, then squared: past fp16's largest value (65504) only at the square."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.lin(x) * 300.0
        return torch.relu(z * z) + 1.0


class Cancellation(torch.nn.Module):
    """(x + 1000) - 1000: bf16 keeps x + 1000 to 0.2 % but the difference loses x altogether."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x + 1000.0
        z = y - 1000.0
        return torch.tanh(z) * 2.0


class Convs(torch.nn.Module):
    """conv2d, relu, conv2d, relu, linear: two convs that a decomposition table can change."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 4, 3)
        self.c2 = torch.nn.Conv2d(4, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.relu(self.c2(y)).mean(dim=(2, 3))
        return self.fc(y)


def _save(module: torch.nn.Module, args: tuple[torch.Tensor, ...], path: Path) -> Path:
    torch.manual_seed(0)
    ep = torch.export.export(module.eval(), args)
    torch.export.save(ep, path)
    return path


@pytest.fixture(scope="session")
def numerics_programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("numerics-programs")
    torch.manual_seed(0)
    return {
        "overflow": _save(Overflow(), (torch.randn(4, 8),), folder / "overflow.pt2"),
        "cancellation": _save(Cancellation(), (torch.randn(16),), folder / "cancellation.pt2"),
        "convs": _save(Convs(), (torch.randn(2, 3, 10, 10),), folder / "convs.pt2"),
    }
