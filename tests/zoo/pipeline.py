"""The rest of the pipeline, built from zoo programs and cached as the zoo is: ExecuTorch `.pte` programs (portable
kernels, and lowered to XNNPACK) and AOTInductor packages (compiled code alone, and packaged with its program).

Each file is made from the zoo's own cached `.pt2` (`tests/zoo/cache.py`), so comparing it with its source compares
one program with what it became. `.cache/zoo/<torch>/pipeline/<hash>/NAME.portable.pte`; the hash covers this file,
the zoo's cache code and the installed executorch version, so editing either rebuilds. A build torch or ExecuTorch
refuses is cached as `NAME.KIND.failed.txt` and raised as `ExportFailed`, as the zoo does.
"""
from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import torch

from pt2_viewer.core.util.files import write_atomically
from tests.programs import ExportFailed, _failure_reason, _write_text_atomic
from tests.zoo import cache
from tests.zoo.cache import ZOO_ROOT, program_by_id, zoo_path

PTE_MODELS = ("mobilenet_v3_small", "nn_transformer")  # a zoo CNN and a small transformer, static shapes
PTE_KINDS = ("portable", "xnnpack")


class _Small(torch.nn.Module):
    """What AOTInductor is tried on: a linear layer, an activation and a constant (compiles in seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x)) * 2


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return "missing"


def pipeline_dir() -> Path:
    digest = hashlib.sha256()
    for source in (__file__, inspect.getsourcefile(cache)):
        digest.update(Path(str(source)).read_bytes())
    digest.update(_version("executorch").encode())
    return ZOO_ROOT / torch.__version__ / "pipeline" / digest.hexdigest()[:12]


def _cached(stem: str, suffix: str, build: object) -> Path:
    directory = pipeline_dir()
    path = directory / f"{stem}{suffix}"
    failed = directory / f"{stem}.failed.txt"
    if failed.exists():
        raise ExportFailed(stem, failed.read_text(encoding="utf-8"))
    if not path.exists():
        try:
            write_atomically(path, lambda tmp: build(Path(tmp)))  # type: ignore[operator]
        except Exception as error:  # torch's and ExecuTorch's errors have no common base class
            reason = _failure_reason(error)
            _write_text_atomic(failed, reason)
            raise ExportFailed(stem, reason) from None
    return path


def source_pt2(model: str) -> Path:
    """The zoo's training-IR `.pt2` a pipeline file is made from."""
    return zoo_path(program_by_id(model))


def pte_path(model: str, kind: str) -> Path:
    """`NAME.portable.pte` (portable kernels only) or `NAME.xnnpack.pte` (lowered to XNNPACK where it can)."""
    from executorch.exir import to_edge_transform_and_lower

    source = source_pt2(model)

    def build(tmp: Path) -> None:
        ep = torch.export.load(str(source))
        partitioners = []
        if kind == "xnnpack":
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

            partitioners = [XnnpackPartitioner()]
        program = to_edge_transform_and_lower(ep, partitioner=partitioners).to_executorch()
        tmp.write_bytes(program.buffer)

    return _cached(f"{model}.{kind}", ".pte", build)


def _small_program() -> torch.export.ExportedProgram:
    torch.manual_seed(cache.SEED)
    return torch.export.export(_Small().eval(), (torch.randn(2, 8),))


def small_pt2() -> Path:
    """The small model's own program (the source an AOTInductor package is compared with)."""
    return _cached("small", ".pt2", lambda tmp: torch.export.save(_small_program(), str(tmp)))


def aoti_path(with_program: bool = False) -> Path:
    """An AOTInductor package of the small model: compiled code alone, or (`with_program`) packaged with its
    ExportedProgram by `package_pt2`, so the archive holds both."""
    def build(tmp: Path) -> None:
        ep = torch.export.load(str(small_pt2()))
        if not with_program:
            torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp))
            return
        from torch.export.pt2_archive._package import package_pt2

        files = torch._inductor.aot_compile(ep.module(), (torch.randn(2, 8),),
                                            options={"aot_inductor.package": True})
        package_pt2(str(tmp), exported_programs={"model": ep}, aoti_files={"model": files})

    return _cached("small.aoti_program" if with_program else "small.aoti", ".pt2", build)


def small_pte(kind: str = "portable") -> Path:
    """The small model as a `.pte` of a few kilobytes: what the hostile and fuzz cases mutate."""
    from executorch.exir import to_edge_transform_and_lower

    def build(tmp: Path) -> None:
        partitioners = []
        if kind == "xnnpack":
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

            partitioners = [XnnpackPartitioner()]
        ep = torch.export.load(str(small_pt2()))
        tmp.write_bytes(to_edge_transform_and_lower(ep, partitioner=partitioners).to_executorch().buffer)

    return _cached(f"small.{kind}", ".pte", build)
