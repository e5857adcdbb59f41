"""Programs for issue 30's on-screen faults, exported by real torch and cached as tests/programs.py caches its own
(one folder per builder version, `cache_dir`)."""
from __future__ import annotations

from pathlib import Path

import torch

from tests.programs import cache_dir, save_programs


class Bad1Fixed(torch.nn.Module):
    """The torch.export tutorial's data-dependent `if` fixed with `cond`: each branch one op."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def true_fn(x: torch.Tensor) -> torch.Tensor:
            return torch.sin(x)

        def false_fn(x: torch.Tensor) -> torch.Tensor:
            return torch.cos(x)

        return torch.cond(x.sum() > 0, true_fn, false_fn, [x])


class BranchWithModule(torch.nn.Module):
    """A branch that calls a submodule: its op stays in the module's group (`lin: Linear`)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda x: self.lin(x).sin(), lambda x: x.cos(), [x])


def strict_cond_branches() -> Path:
    """Both, exported with strict=True: torch names the root `_export_root` inside each branch's module stack."""
    path = cache_dir(strict_cond_branches) / "strict_cond_branches.pt2"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        x = torch.randn(3, 3)
        save_programs({"bad1_fixed": torch.export.export(Bad1Fixed(), (x,), strict=True),
                       "branch_with_module": torch.export.export(BranchWithModule(), (x,), strict=True)}, path)
    return path


class Transformer(torch.nn.Module):
    """Weights named as GPT-2's are (`transformer.h.0.attn.c_attn.weight`): long names that differ in the middle."""

    def __init__(self) -> None:
        super().__init__()
        blocks = []
        for _ in range(3):
            block = torch.nn.Module()
            block.attn = torch.nn.Module()
            block.attn.c_attn = torch.nn.Linear(8, 8)
            block.mlp = torch.nn.Module()
            block.mlp.c_fc = torch.nn.Linear(8, 8)
            blocks.append(block)
        self.transformer = torch.nn.Module()
        self.transformer.h = torch.nn.ModuleList(blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.transformer.h:
            x = block.mlp.c_fc(block.attn.c_attn(x)).relu()
        return x


def transformer_names() -> Path:
    path = cache_dir(transformer_names) / "transformer_names.pt2"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        save_programs({"model": torch.export.export(Transformer(), (torch.randn(2, 8),))}, path)
    return path
