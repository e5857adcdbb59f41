"""`.pte` files for numerics op by op and `run --node-times --source` (core/numerics/pte.py,
core/deploy/etrecord_choice.py), lowered with ExecuTorch's own API and kept without an ETRecord, as a user's file:
- the zoo's transformer with one Linear weight changed before lowering (`changed_weight`): its instructions equal a
  fresh lowering of the unchanged source, its values do not, from that linear on;
- a small linear + clamp lowered with clamp's bounds changed (`other_bounds`): the same operators in the same order
  as the source's lowering, one literal argument apart, so its instructions are not the source's.
Each is cached as the test programs are (tests/programs.py `cached_file`, keyed by this builder and executorch's
version); `make fixtures` builds them and the zoo lowerings the faithful-file tests read (`prebuild_fixtures`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from tests.deploy_programs import CNN, TRANSFORMER, _version, lowered, source_path
from tests.programs import cache_dir, cached_file

LSTM = "nn_lstm"
FAITHFUL = ((TRANSFORMER, "portable"), (TRANSFORMER, "xnnpack"), (LSTM, "portable"), (LSTM, "xnnpack"),
            (CNN, "portable"), (CNN, "xnnpack"))
CHANGED_MODULE = "encoder.layers.0.linear1"  # the Linear whose weight the changed copy scales


@dataclass
class Changed:
    source: Path  # the program as exported
    pte: Path  # lowered from a copy with one Linear weight changed
    module: str  # that Linear's module path


def _lower_with_executorch(ep: torch.export.ExportedProgram, tmp: Path) -> None:
    from executorch.exir import to_edge_transform_and_lower

    tmp.write_bytes(to_edge_transform_and_lower(ep).to_executorch().buffer)


def _changed_weight_pte(tmp: Path) -> None:
    ep = torch.export.load(str(source_path(TRANSFORMER)))
    with torch.no_grad():
        ep.state_dict[f"{CHANGED_MODULE}.weight"].mul_(1.5)
    _lower_with_executorch(ep, tmp)


def changed_weight() -> Changed:
    """The zoo transformer, and its portable `.pte` lowered from a copy whose CHANGED_MODULE weight is 1.5x."""
    path = cache_dir(_changed_weight_pte, _version("executorch")) / "transformer.changed_weight.portable.pte"
    return Changed(source_path(TRANSFORMER), cached_file(path, _changed_weight_pte), CHANGED_MODULE)


class Clamped(torch.nn.Module):
    """A linear layer clamped to [0, top]: two lowerings with other bounds run the same operators."""

    def __init__(self, top: float) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)
        self.top = top

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.linear(x), 0.0, self.top)


def _clamped(top: float) -> torch.export.ExportedProgram:
    torch.manual_seed(0)
    return torch.export.export(Clamped(top).eval(), (torch.randn(2, 8),))


def _clamped_source(tmp: Path) -> None:
    torch.export.save(_clamped(1.0), str(tmp))


def _other_bounds_pte(tmp: Path) -> None:
    _lower_with_executorch(_clamped(2.0), tmp)


def other_bounds() -> tuple[Path, Path]:
    """(the clamp-to-1 source `.pt2`, a `.pte` of the clamp-to-2 program): the same operators, other literals."""
    key = _version("executorch")
    source = cached_file(cache_dir(_clamped_source, key) / "clamped.pt2", _clamped_source)
    return source, cached_file(cache_dir(_other_bounds_pte, key) / "clamped_other_bounds.pte", _other_bounds_pte)


def prebuild_fixtures() -> None:
    for model, backend in FAITHFUL:
        lowered(model, backend)
    changed_weight()
    other_bounds()
