"""Real pairs of programs for the diff tests (core/diff/), exported by this machine's torch and cached on disk.

- `resnet_block_changed`: ResNet-18 and the same model with one block's `relu` swapped for `GELU`: every later `relu_N`
  is renamed, and only `layer2.1` changed;
- `resnet_bf16`: ResNet-18 and its bf16 copy: dtypes only;
- `resnet_static`: ResNet-18 with a static batch, against the zoo's dynamic one: `dynamic` only;
- `gpt2` and `gpt2_core`: a small GPT-2 (transformers, random weights) and its core ATen decomposition.

Cached under `.cache/diff-programs/<torch version>/<hash of this file>/NAME.pt2` by tests/programs.py's helpers
(`cached_file`: a lock, atomic writes, failures cached); a case torch refuses skips the test with torch's reason.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch.export import Dim, ExportedProgram

from tests.fixture_root import FIXTURE_ROOT
from tests.programs import ExportFailed, cached_file, save_programs
from tests.zoo.torchvision_shim import import_torchvision
from tests.zoo.torchvision_shim import install as install_torchvision_shim

CACHE = FIXTURE_ROOT / "diff-programs"


def _resnet(change: Callable[[torch.nn.Module], object] | None = None, dtype: torch.dtype = torch.float32,
            dynamic: bool = True) -> ExportedProgram:
    torch.manual_seed(0)
    model = import_torchvision().models.resnet18(weights=None, num_classes=10).eval()
    if change is not None:
        change(model)
    model = model.to(dtype)
    image = torch.randn(2, 3, 64, 64, dtype=dtype)
    return torch.export.export(model, (image,), dynamic_shapes=({0: Dim("batch")},) if dynamic else None)


def _swap_block_relu(model: torch.nn.Module) -> None:
    model.layer2[1].relu = torch.nn.GELU()  # type: ignore[index]


def _gpt2() -> ExportedProgram:
    install_torchvision_shim()
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=1000, n_positions=64, n_embd=64, n_layer=2, n_head=4, use_cache=False)
    model = transformers.GPT2LMHeadModel(config).eval()
    return torch.export.export(model, (torch.randint(0, 1000, (1, 16)),), {"use_cache": False})


CASES: dict[str, Callable[[], ExportedProgram]] = {
    "resnet": _resnet,
    "resnet_block_changed": lambda: _resnet(_swap_block_relu),
    "resnet_bf16": lambda: _resnet(dtype=torch.bfloat16),
    "resnet_static": lambda: _resnet(dynamic=False),
    "gpt2": _gpt2,
    "gpt2_core": lambda: _gpt2().run_decompositions(),
}


def cache_dir() -> Path:
    return CACHE / torch.__version__ / hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def diff_program_path(name: str) -> Path:
    """The cached archive of case `name`, exported first if needed; skips the test naming torch's reason."""
    try:
        return cached_file(cache_dir() / f"{name}.pt2", lambda tmp: save_programs({"model": CASES[name]()}, tmp))
    except ExportFailed as error:
        pytest.skip(f"torch {torch.__version__} cannot export {name}: {error.reason}")


if __name__ == "__main__":
    for case in CASES:
        print(case, diff_program_path(case))
