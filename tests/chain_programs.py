"""The pipeline's three stages of one program, for the chain tests (core/diff/handles.py, app/compare/chain.py): the
zoo's CNN as exported, its core ATen decomposition (`run_decompositions()`, what Program > Decompose… makes), and its
`.pte` lowered to portable kernels with its ETRecord (tests/deploy_programs.py). The decomposition is cached as the
test programs are (tests/programs.py `cached_file`, keyed by this builder and the source archive's path)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from tests.deploy_programs import CNN, Lowered, lowered_or_skip
from tests.programs import cache_dir, cached_file, save_programs


@dataclass
class Chain:
    source: Path  # the export
    core: Path  # its core ATen decomposition
    lowered: Lowered  # its .pte, ETRecord and the lower job's result (source_to_pte)


def core_aten(source: Path) -> Path:
    """`source`'s core ATen decomposition, saved as a `.pt2` (torch's `from_node` names the source's nodes)."""

    def build(tmp: Path) -> None:
        save_programs({"model": torch.export.load(str(source)).run_decompositions()}, tmp)

    return cached_file(cache_dir(core_aten, str(source)) / f"{source.stem}.core_aten.pt2", build)


def cnn_chain(backend: str = "portable") -> Chain:
    """The zoo's CNN, its core ATen decomposition and its `.pte` (skips when ExecuTorch cannot lower it)."""
    lowered = lowered_or_skip(CNN, backend)
    return Chain(lowered.source, core_aten(lowered.source), lowered)
