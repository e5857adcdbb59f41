"""Programs Run must report as torch computes them: in-place ops on user inputs (`add_`, `addcdiv_`, `addmv_`,
`resize_`), a buffer updated in place (a KV cache), a sparse output, an output whose pytree type is registered
without a keys function (as diffusers registers `UNet2DConditionOutput`), and a value read from data (an unbacked
float symbol, `zuf0`). Each is exported and saved with its sample
inputs by this machine's torch, cached as tests/programs.py caches its own (`program_path`), and `torch_answer` gives
what torch itself returns on the same inputs: the reference the tests compare Run's values with.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.utils._pytree as pytree

from tests.programs import ProgramCase, Programs, cache_dir, cached_file, program_path


class Sample:
    """An output type registered with plain flattening only: no `flatten_with_keys_fn`, as diffusers does."""

    def __init__(self, sample: torch.Tensor, extra: dict[str, torch.Tensor]) -> None:
        self.sample = sample
        self.extra = extra


if Sample not in pytree.SUPPORTED_NODES:
    pytree.register_pytree_node(Sample, lambda s: ([s.sample, s.extra], None), lambda c, _ctx: Sample(*c),
                                serialized_type_name="tests.run_programs.Sample")


class AddInplace(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.add_(y)


class AddcdivInplace(torch.nn.Module):
    def forward(self, x: torch.Tensor, t1: torch.Tensor, t2: torch.Tensor) -> torch.Tensor:
        return x.addcdiv_(t1, t2, value=0.5)


class AddmvInplace(torch.nn.Module):
    def forward(self, x: torch.Tensor, m: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return x.addmv_(m, v)


class ResizeInplace(torch.nn.Module):
    """Grows its input: called again on the same tensor, the program's guard `x.size()[0] == 5` fails."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.resize_(10)[:5] * 2


class KvCache(torch.nn.Module):
    """Adds the new key into a cache buffer, then reads the whole cache: each call changes what the next returns."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 3))

    def forward(self, key: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        self.cache.index_add_(0, pos, key)
        return self.cache.cumsum(0)


class SparseOutput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x).to_sparse()


class CustomPytreeOutput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Sample:
        return Sample(x * 2, {"total": x.sum(), "first": x[0]})


class ItemScale(torch.nn.Module):
    """Scales by a value read from the data: torch 2.13 names that unbacked float `zuf0`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x.sum().item()


def _export(module: torch.nn.Module, *args: torch.Tensor) -> Programs:
    torch.manual_seed(0)
    return {"model": torch.export.export(module, args)}


def _add() -> Programs:
    return _export(AddInplace(), torch.randn(4, 3), torch.randn(4, 3))


def _addcdiv() -> Programs:
    return _export(AddcdivInplace(), torch.randn(4, 3), torch.randn(4, 3), torch.rand(4, 3) + 0.5)


def _addmv() -> Programs:
    return _export(AddmvInplace(), torch.randn(4), torch.randn(4, 3), torch.randn(3))


def _resize() -> Programs:
    return _export(ResizeInplace(), torch.randn(5))


def _kv_cache() -> Programs:
    return _export(KvCache(), torch.randn(1, 3), torch.tensor([2]))


def _sparse() -> Programs:
    return _export(SparseOutput(), torch.randn(5, 5))


def _custom_pytree() -> Programs:
    return _export(CustomPytreeOutput(), torch.randn(3, 2))


def _unbacked_float() -> Programs:
    return _export(ItemScale(), torch.randn(3))


CASES: dict[str, ProgramCase] = {name: ProgramCase(name, build, "handmade") for name, build in {
    "add_inplace": _add, "addcdiv_inplace": _addcdiv, "addmv_inplace": _addmv, "resize_inplace": _resize,
    "kv_cache": _kv_cache, "sparse_output": _sparse, "custom_pytree_output": _custom_pytree,
    "unbacked_float": _unbacked_float,
}.items()}
# the programs whose in-place ops change a user input
MUTATING = ("add_inplace", "addcdiv_inplace", "addmv_inplace", "resize_inplace")


def run_program_path(name: str) -> Path:
    """The cached `.pt2` of case `name` (exported on first use)."""
    return program_path(name, CASES)


def torch_answer(path: Path) -> Any:
    """What torch returns for one call of the saved program (freshly loaded) on copies of its saved sample inputs."""
    ep = torch.export.load(path)
    assert ep.example_inputs is not None
    args, kwargs = pytree.tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, ep.example_inputs)
    with torch.no_grad():
        return ep.module()(*args, **kwargs)


def aoti_package_of(name: str) -> Path:
    """An AOTInductor package compiled from case `name` (tens of seconds the first time; cached beside it)."""
    source = run_program_path(name)

    def build(tmp: Path) -> None:
        torch._inductor.aoti_compile_and_package(torch.export.load(source), package_path=str(tmp))

    return cached_file(cache_dir(aoti_package_of, name) / f"{name}.aoti.pt2", build)
